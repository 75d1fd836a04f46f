import { ToolError } from '../tool-error';

/** Node's filesystem errors in the tool error kinds the model reads. */
export function toolErrorFromFs(error: unknown, displayPath: string): unknown {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ENOENT':
      return new ToolError('FileNotFound', `no such file or directory: ${displayPath}`);
    case 'EISDIR':
      return new ToolError('InvalidArgs', `is a directory, not a file: ${displayPath}`);
    case 'ENOTDIR':
      return new ToolError('InvalidArgs', `not a directory: ${displayPath}`);
    case 'EACCES':
    case 'EPERM':
      return new ToolError('PermissionDenied', `permission denied: ${displayPath}`);
    default:
      return error;
  }
}
