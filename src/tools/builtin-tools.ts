import { editTool } from './edit';
import { execTool } from './exec';
import { globTool } from './glob';
import { grepTool } from './grep';
import { listDirectoryTool } from './list-directory';
import { readTool } from './read';
import type { AgentTool } from './tool';
import { writeTool } from './write';

export function builtinTools(): AgentTool[] {
  return [readTool, writeTool, editTool, listDirectoryTool, grepTool, globTool, execTool] as AgentTool[];
}
