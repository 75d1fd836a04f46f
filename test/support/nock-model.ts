import nock from 'nock';
import { type ChatRequest, ModelScript, type ScriptStep } from './scripted-model';

export const NOCK_MODEL_URL = 'http://model.test/v1';

/** Fakes the model's HTTP endpoint with nock; only this host is intercepted, Temporal's gRPC is untouched. */
export function nockModel(steps: ScriptStep[]): ModelScript {
  const script = new ModelScript(steps);
  nock('http://model.test')
    .post('/v1/chat/completions')
    .times(steps.length + 1)
    .reply(function (_uri, body) {
      const answer = script.answer(body as ChatRequest);
      return [answer.status, answer.body, answer.headers];
    });
  return script;
}
