import { ConversationOptionsSchema } from '../../src/shared/conversation-options';
import { UserMessageInputSchema } from '../../src/shared/conversation-api';
import { InputParsing, knownKeysOnly } from '../../src/workflows/input-parsing';

describe('what a conversation reads from clients', () => {
  const misspelled = {
    execSecurty: 'sandbox',
    approval: { mod: 'auto', timeoutMs: 5_000 },
    subAgents: { maxDeep: 9 },
  };

  test('strictly: a misspelled key is refused, naming it, never taken for an absent one', () => {
    const parsed = new InputParsing(true).safeParse(ConversationOptionsSchema, misspelled);
    expect(parsed.success).toBe(false);
    const keys = parsed.error!.issues.flatMap((issue) =>
      issue.code === 'unrecognized_keys' ? issue.keys : [],
    );
    expect(keys.sort()).toEqual(['execSecurty', 'maxDeep', 'mod']);
  });

  test('as runs recorded before strict inputs read it: unknown keys dropped at every depth, the rest kept', () => {
    const parsed = new InputParsing(false).safeParse(ConversationOptionsSchema, misspelled);
    expect(parsed.success).toBe(true);
    expect(parsed.data).toMatchObject({ approval: { timeoutMs: 5_000 } });
    expect(parsed.data).not.toHaveProperty('execSecurty');
    expect(parsed.data!.approval).not.toHaveProperty('mod');
    expect(parsed.data!.subAgents).not.toHaveProperty('maxDeep');
    // Wrong values are still wrong either way.
    expect(
      new InputParsing(false).safeParse(UserMessageInputSchema, { text: '', messageId: 'm', extra: 1 })
        .success,
    ).toBe(false);
  });

  test('what an old run hands on is cut to the keys known, so its next (strict) run takes it', () => {
    const handed = knownKeysOnly(ConversationOptionsSchema, {
      model: 'm',
      approval: { mode: 'ask', mod: 'x' },
      extra: true,
    });
    expect(handed).toEqual({ model: 'm', approval: { mode: 'ask' } });
    expect(ConversationOptionsSchema.safeParse(handed).success).toBe(true);
    expect(knownKeysOnly(ConversationOptionsSchema, undefined)).toBeUndefined();
  });
});
