import {
  ApprovalDecisionSchema,
  ApprovalSettingsSchema,
  defaultApprovalMode,
  effectiveApprovalMode,
} from '../../src/shared/approvals';

test.each([
  ['low', 'auto'],
  ['medium', 'ask'],
  ['high', 'ask'],
  ['critical', 'always'],
] as const)('a %s risk tool defaults to %s', (risk, mode) => {
  expect(defaultApprovalMode(risk)).toBe(mode);
});

describe('effectiveApprovalMode', () => {
  test('without settings, the tool default applies', () => {
    expect(effectiveApprovalMode({}, 'write', 'ask')).toBe('ask');
    expect(effectiveApprovalMode({}, 'read', 'auto')).toBe('auto');
  });

  test('the conversation mode overrides ask and auto tools, never an always tool', () => {
    expect(effectiveApprovalMode({ mode: 'auto' }, 'write', 'ask')).toBe('auto');
    expect(effectiveApprovalMode({ mode: 'ask' }, 'read', 'auto')).toBe('ask');
    expect(effectiveApprovalMode({ mode: 'auto' }, 'wipe', 'always')).toBe('always');
  });

  test('a per-tool setting wins over everything', () => {
    const settings = { mode: 'auto' as const, tools: { wipe: 'auto' as const, read: 'always' as const } };
    expect(effectiveApprovalMode(settings, 'wipe', 'always')).toBe('auto');
    expect(effectiveApprovalMode(settings, 'read', 'auto')).toBe('always');
    expect(effectiveApprovalMode(settings, 'write', 'ask')).toBe('auto');
  });
});

describe('schemas', () => {
  test('a decision needs a tool call id, a known decision and a named approver', () => {
    expect(
      ApprovalDecisionSchema.safeParse({ toolCallId: 'c', decision: 'allow_once', by: 'a' }).success,
    ).toBe(true);
    expect(
      ApprovalDecisionSchema.safeParse({ toolCallId: '', decision: 'allow_once', by: 'a' }).success,
    ).toBe(false);
    expect(ApprovalDecisionSchema.safeParse({ toolCallId: 'c', decision: 'maybe', by: 'a' }).success).toBe(
      false,
    );
    expect(
      ApprovalDecisionSchema.safeParse({ toolCallId: 'c', decision: 'allow_once', by: '  ' }).success,
    ).toBe(false);
  });

  test('settings refuse an empty approvers list and a non-positive timeout', () => {
    expect(ApprovalSettingsSchema.safeParse({ approvers: [] }).success).toBe(false);
    expect(ApprovalSettingsSchema.safeParse({ timeoutMs: 0 }).success).toBe(false);
    expect(ApprovalSettingsSchema.safeParse({ tools: { exec: 'sometimes' } }).success).toBe(false);
  });
});
