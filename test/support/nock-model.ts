import nock from 'nock';
import { PassThrough } from 'node:stream';
import { type ChatRequest, ModelScript, type ScriptStep, writeAnswer } from './scripted-model';

export const NOCK_MODEL_URL = 'http://model.test/v1';

/**
 * Fakes the model's HTTP endpoint with nock; only this host is intercepted, Temporal's gRPC is untouched.
 * `delayFirstMs` holds back the first answer, so a test can act while a model call is in flight.
 * `only`: the script answers only the requests it accepts (one conversation's), so a conversation
 * an earlier test left running cannot take this one's answers.
 */
export function nockModel(
  steps: ScriptStep[],
  options: { delayFirstMs?: number; only?: (request: ChatRequest) => boolean } = {},
): ModelScript {
  const script = new ModelScript(steps);
  const answer = (body: unknown) => {
    const reply = script.answer(body as ChatRequest);
    if (!reply.paced) {
      return [reply.status, reply.body, reply.headers] as [number, string, Record<string, string>];
    }
    const stream = new PassThrough();
    void writeAnswer(reply, script, (piece) => stream.write(piece)).finally(() => stream.end());
    return [reply.status, stream, reply.headers] as [number, PassThrough, Record<string, string>];
  };
  const { only } = options;
  const chat = () =>
    only
      ? nock('http://model.test').post('/v1/chat/completions', (body) => only(body as ChatRequest))
      : nock('http://model.test').post('/v1/chat/completions');
  let remaining = steps.length + 1;
  if (options.delayFirstMs !== undefined) {
    chat()
      .delay(options.delayFirstMs)
      .reply((_uri, body) => answer(body));
    remaining--;
  }
  chat()
    .times(remaining)
    .reply((_uri, body) => answer(body));
  return script;
}
