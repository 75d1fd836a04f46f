/**
 * `AGENT_LOCAL_TOOLS`: `on` (the default) lets short read-only tools (`read`, `list_directory`) run
 * as local activities on the worker running the conversation, two server round trips fewer a turn;
 * `off` runs every tool as an activity, each shown in the Temporal Web UI by its summary.
 */
export function localToolsFromEnv(env: NodeJS.ProcessEnv): boolean {
  const value = env.AGENT_LOCAL_TOOLS?.trim().toLowerCase();
  if (value === undefined || value === '' || value === 'on') return true;
  if (value === 'off') return false;
  throw new Error(`AGENT_LOCAL_TOOLS must be on or off, not ${JSON.stringify(env.AGENT_LOCAL_TOOLS)}`);
}
