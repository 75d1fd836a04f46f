/** Wrong words on the command line: the usage text follows the message and the exit code is 2. */
export class UsageError extends Error {}
