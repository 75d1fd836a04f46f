import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/**
 * A configuration file read whole, refused when larger than `maxBytes` (a wrong path pointing at a
 * log or a device must not be read into memory). Errors name the file and what it was meant to be.
 */
export function readSmallFile(file: string, maxBytes: number, what: string): Buffer {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(
      `cannot read ${what} ${file}: ${code === 'ENOENT' ? 'no such file' : (code ?? String(error))}`,
      { cause: error },
    );
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new Error(`${what} ${file} is not a file`);
    if (stat.size > maxBytes) throw new Error(`${what} ${file} is larger than ${maxBytes} bytes`);
    const buffer = Buffer.alloc(stat.size);
    let read = 0;
    while (read < buffer.length) {
      const got = readSync(fd, buffer, read, buffer.length - read, read);
      if (got === 0) break;
      read += got;
    }
    return buffer.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}
