// A team's worker: their workflows and activities, with durable-agent added through its plugin and
// a tool of their own. Environment: TEST_TEMPORAL_ADDRESS, TASK_QUEUE, OPENAI_BASE_URL, WORKSPACE,
// MARKER_DIR (the custom tool appends `pid labels` to MARKER_DIR/labels per run). Prints `ready`.
import { appendFile } from 'node:fs/promises';
import path from 'node:path';
import { NativeConnection, Worker } from '@temporalio/worker';
import { z } from 'zod';
import { DurableAgentPlugin, defineTool, textResult } from '../../../src/worker';
import { createTeamActivities } from './activities';

const env = process.env;
const markerDir = env.MARKER_DIR!;

const labelTicket = defineTool({
  name: 'label_ticket',
  label: 'Label ticket',
  description: 'Puts labels on the ticket in the tracker.',
  parameters: z.object({ labels: z.array(z.string()).min(1) }),
  category: 'other',
  idempotent: false,
  risk: 'medium',
  async execute(_id, { labels }) {
    await appendFile(path.join(markerDir, 'labels'), `${process.pid} ${labels.join(',')}\n`);
    return textResult(`labelled ${labels.join(', ')}`);
  },
});

async function main(): Promise<void> {
  const connection = await NativeConnection.connect({ address: env.TEST_TEMPORAL_ADDRESS! });
  const worker = await Worker.create({
    connection,
    taskQueue: env.TASK_QUEUE!,
    workflowsPath: require.resolve('./workflows'),
    activities: createTeamActivities(markerDir),
    plugins: [
      new DurableAgentPlugin({
        model: { baseURL: env.OPENAI_BASE_URL!, apiKey: 'team', model: 'scripted-model' },
        tools: ['read', labelTicket],
        workspace: env.WORKSPACE!,
        shutdownGraceTimeMs: 1_000,
      }),
    ],
  });
  process.stdout.write('ready\n');
  await worker.run();
  await connection.close();
}

main().catch((error: Error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
