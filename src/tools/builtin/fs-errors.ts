import { ToolError } from '../tool-error';
import { withoutDescriptorPaths } from '../held-directory';

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
      return storageError(error, displayPath) ?? withoutDescriptorPaths(error);
  }
}

/**
 * A write the storage refused (full, over quota, read-only, file too large) as an error the model
 * can act on. Files are written beside their target and renamed over it, so the target is untouched.
 */
export function storageError(error: unknown, displayPath: string): ToolError | undefined {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return new ToolError(
        'ExecutionFailed',
        `no space left on the device for ${displayPath} (the disk or quota is full): nothing was changed; free space first`,
      );
    case 'EFBIG':
      return new ToolError(
        'ExecutionFailed',
        `${displayPath}: the file would be larger than allowed here; nothing was changed`,
      );
    case 'EROFS':
      return new ToolError('PermissionDenied', `${displayPath} is on a read-only file system`);
    default:
      return undefined;
  }
}
