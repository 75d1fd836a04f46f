/**
 * Run inside bubblewrap with the workspace (argv[2]) on a 64 KB tmpfs: `write` and `edit` a file
 * with more than fits, and print what the model read, what the file holds afterwards and which files
 * the workspace has (no temporary files may be left behind).
 */
import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { editTool } from '../../src/tools/builtin/edit';
import { Workspace } from '../../src/tools/workspace';
import { writeTool } from '../../src/tools/builtin/write';
import type { AgentTool } from '../../src/tools/tool';

async function main() {
  const root = process.argv[2]!;
  const workspace = new Workspace(root);
  const file = path.join(root, 'notes.txt');
  await writeFile(file, 'original\n');
  const big = 'x'.repeat(200_000);
  const attempt = (tool: AgentTool, args: Record<string, unknown>) =>
    tool
      .execute('call', tool.parameters.parse(args), new AbortController().signal, () => {}, {
        workspace,
        conversationId: 'c',
        agentId: 'default',
      })
      .then(
        () => ({ ok: true }),
        (error: Error & { kind?: string }) => ({ ok: false, kind: error.kind, message: error.message }),
      );
  const write = await attempt(writeTool as AgentTool, { path: 'notes.txt', content: big });
  const edit = await attempt(editTool as AgentTool, {
    path: 'notes.txt',
    old_string: 'original',
    new_string: big,
  });
  process.stdout.write(
    JSON.stringify({ write, edit, content: await readFile(file, 'utf8'), files: await readdir(root) }),
  );
}

void main();
