/** `.tools/node/<version>/bin/node`, fetched from the npm registry the first time. */
export function nodeBinary(version: string): Promise<string>;
