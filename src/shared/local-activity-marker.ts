/** The marker Temporal's SDKs record with a local activity's result, in the task that acts on it. */
export const LOCAL_ACTIVITY_MARKER = 'core_local_activity';
