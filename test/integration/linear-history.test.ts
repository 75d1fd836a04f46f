import { randomUUID } from 'node:crypto';
import { ask } from '../support/ask';
import { historyBytes } from '../support/history-size';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import type { ChatRequest, ScriptedReply } from '../support/scripted-model';
import { bulkTool } from '../support/test-tools';

const TURNS = 50;
const TOOL_OUTPUT_BYTES = 4_096;
const harness = useNockedHarness([bulkTool]);

/** Each turn: the model asks for a 4 KB tool output, then answers. */
function turnReply(request: ChatRequest): ScriptedReply {
  const last = request.messages[request.messages.length - 1]!;
  if (last.role === 'user') {
    return {
      toolCalls: [
        { name: 'bulk', arguments: { bytes: TOOL_OUTPUT_BYTES, seed: `${request.messages.length}-` } },
      ],
    };
  }
  return { text: `Answer after ${request.messages.length} messages.` };
}

test('history grows linearly over a 50-turn conversation with 4 KB tool outputs', async () => {
  const script = nockModel(Array.from({ length: TURNS * 2 }, () => turnReply));
  const id = `conv-${randomUUID()}`;
  const sizes: number[] = [0];
  for (let turn = 1; turn <= TURNS; turn++) {
    const { finished } = await ask(harness().agent, id, `Turn ${turn}: fetch the data.`);
    expect(finished.outcome).toBe('answered');
    sizes.push((await historyBytes(harness().client, id)).bytes);
  }

  // The model still saw the whole conversation on the last call: the default system prompt, 49
  // earlier turns of 4 messages, plus this one's 3.
  expect(script.requests[script.requests.length - 1]!.messages).toHaveLength(1 + (TURNS - 1) * 4 + 3);
  expect(script.exhausted).toBe(false);

  const early = sizes[20]! - sizes[10]!;
  const late = sizes[50]! - sizes[40]!;
  // Ten turns carry at least their 40 KB of tool output, and late turns cost no more than early ones.
  expect(early).toBeGreaterThan(10 * TOOL_OUTPUT_BYTES);
  expect(late / early).toBeLessThan(1.5);
}, 300_000);
