import { mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createAdmitConversation } from '../../src/activities/admit-conversation';
import { type AdmissionRequest, type WorkerFloors, floorRefusal } from '../../src/shared/worker-floors';
import { floorsFromEnv } from '../../src/worker/floor-settings';

const floors: WorkerFloors = {
  workspaceRoots: ['/srv'],
  approval: { exec: 'always', write: 'ask' },
  execSecurity: 'sandbox',
  acceptCarried: [],
};
const request = (overrides: Partial<AdmissionRequest> = {}): AdmissionRequest => ({
  approval: {},
  carried: [],
  continued: false,
  ...overrides,
});

describe('floors', () => {
  test('a conversation may ask for more approval and stricter exec, never less', () => {
    expect(floorRefusal(request(), floors)).toBeUndefined();
    expect(
      floorRefusal(request({ approval: { mode: 'ask', tools: { exec: 'always' } } }), floors),
    ).toBeUndefined();
    expect(floorRefusal(request({ execSecurity: 'safe-bin' }), floors)).toBeUndefined();
    expect(floorRefusal(request({ execSecurity: 'full' }), floors)).toMatch(
      /execSecurity full is looser than this worker allows \(sandbox at the loosest\)/,
    );
    expect(floorRefusal(request({ approval: { tools: { exec: 'ask' } } }), floors)).toMatch(
      /approval ask for exec is below this worker's floor \(always\)/,
    );
    expect(floorRefusal(request({ approval: { mode: 'auto' } }), floors)).toMatch(
      /approval mode auto is below this worker's floor for exec/,
    );
    // Every floored tool raised explicitly: auto for the rest is allowed.
    expect(
      floorRefusal(request({ approval: { mode: 'auto', tools: { exec: 'always', write: 'ask' } } }), floors),
    ).toBeUndefined();
    expect(
      floorRefusal(request({ approval: { mode: 'auto' } }), { ...floors, approval: { '*': 'ask' } }),
    ).toMatch(/for every tool \(ask\)/);
  });

  test('carried state counts only from the conversation’s own earlier run, unless accepted', () => {
    const carried = ['transcript', 'standingApprovals'];
    expect(floorRefusal(request({ carried, continued: true }), floors)).toBeUndefined();
    expect(floorRefusal(request({ carried }), floors)).toMatch(
      /carried state \(transcript, standingApprovals\) is accepted only from this conversation's own earlier run/,
    );
    expect(floorRefusal(request({ carried }), { ...floors, acceptCarried: ['transcript'] })).toMatch(
      /\(standingApprovals\)/,
    );
  });

  test('only a run the workflow itself continued carries state: the worker asks Temporal, not the workflow', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-floors-'));
    const carried = ['standingApprovals', 'queue'];
    for (const [runStart, admitted] of [
      ['continued', true],
      ['cron', false],
      ['retry', false],
      ['client', false],
    ] as const) {
      let asked = 0;
      const admit = createAdmitConversation({
        defaultWorkspace: root,
        runStart: async () => {
          asked++;
          return runStart;
        },
      });
      // The workflow's own claim to be continued counts for nothing.
      const admission = await admit(request({ carried, continued: true }));
      expect({ runStart, admitted: admission.admitted, asked }).toEqual({ runStart, admitted, asked: 1 });
      if (!admission.admitted)
        expect(admission.reason).toMatch(/accepted only from this conversation's own earlier run/);
    }
    // With nothing carried there is nothing to ask.
    let asked = 0;
    const admit = createAdmitConversation({
      defaultWorkspace: root,
      runStart: async () => (asked++, 'cron'),
    });
    expect(await admit(request())).toMatchObject({ admitted: true });
    expect(asked).toBe(0);
  });

  test("a client's start carrying a fork is admitted only when the worker verifies it; a continued run needs no check", async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-floors-'));
    const carried = ['transcript', 'runCount', 'forkedFrom'];
    const outcomes = [];
    for (const [runStart, verdict, acceptCarried] of [
      ['client', { verified: true }, []],
      ['client', { verified: false, reason: 'not the original' }, []],
      ['continued', { verified: false, reason: 'never asked' }, []],
      ['client', { verified: false, reason: 'never asked' }, ['transcript', 'runCount', 'forkedFrom']],
    ] as const) {
      let verified = 0;
      const admit = createAdmitConversation({
        defaultWorkspace: root,
        floors: { acceptCarried: [...acceptCarried] },
        runStart: async () => runStart,
        verifyFork: async () => (verified++, verdict),
      });
      const admission = await admit(request({ carried, continued: runStart === 'continued' }));
      outcomes.push({
        admitted: admission.admitted,
        verified,
        ...(admission.admitted ? {} : { reason: admission.reason }),
      });
    }
    expect(outcomes).toEqual([
      { admitted: true, verified: 1 },
      { admitted: false, verified: 1, reason: 'refused by the worker: not the original' },
      { admitted: true, verified: 0 },
      { admitted: true, verified: 0 },
    ]);
  });

  test('the environment sets roots, approval floors and accepted carried state; wrong entries stop the worker', () => {
    const worker = { workspace: '/work', execSecurity: 'safe-bin' as const };
    expect(floorsFromEnv({}, worker)).toEqual({
      workspaceRoots: ['/work'],
      approval: {},
      execSecurity: 'safe-bin',
      acceptCarried: [],
    });
    expect(
      floorsFromEnv(
        {
          AGENT_WORKSPACE_ROOTS: '/a:/b',
          AGENT_APPROVAL_FLOOR: 'bash=always, *=ask',
          AGENT_ACCEPT_CARRIED: 'transcript,queue',
        },
        worker,
      ),
    ).toEqual({
      workspaceRoots: ['/a', '/b'],
      approval: { exec: 'always', '*': 'ask' },
      execSecurity: 'safe-bin',
      acceptCarried: ['transcript', 'queue'],
    });
    expect(floorsFromEnv({ AGENT_ACCEPT_CARRIED: 'all' }, worker).acceptCarried).toContain(
      'standingApprovals',
    );
    expect(() => floorsFromEnv({ AGENT_WORKSPACE_ROOTS: 'relative' }, worker)).toThrow(/absolute paths/);
    expect(() => floorsFromEnv({ AGENT_APPROVAL_FLOOR: 'exec=sometimes' }, worker)).toThrow(
      /tool=auto\|ask\|always/,
    );
    expect(() => floorsFromEnv({ AGENT_ACCEPT_CARRIED: 'secrets' }, worker)).toThrow(/AGENT_ACCEPT_CARRIED/);
  });

  test('the workspace must be an existing directory inside a root, symlinks followed', async () => {
    const base = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-floors-'));
    const root = path.join(base, 'root');
    const inside = path.join(root, 'project');
    const outside = path.join(base, 'elsewhere');
    await mkdir(inside, { recursive: true });
    await mkdir(outside);
    await symlink(outside, path.join(root, 'link-out'));
    await writeFile(path.join(root, 'file'), '');
    await mkdir(path.join(base, 'root-sibling'));
    const admit = createAdmitConversation({ defaultWorkspace: root, floors: { workspaceRoots: [root] } });
    expect(await admit(request())).toEqual({ admitted: true, approvalFloor: {} });
    expect(await admit(request({ workspace: inside }))).toMatchObject({ admitted: true });
    for (const [workspace, why] of [
      [outside, /lies outside the directories this worker serves/],
      [path.join(root, 'link-out'), /lies outside/],
      [path.join(base, 'root-sibling'), /lies outside/],
      [path.join(root, '..'), /lies outside/],
      ['/', /lies outside/],
      [path.join(root, 'missing'), /does not exist/],
      [path.join(root, 'file'), /is not a directory/],
      ['project', /must be an absolute path/],
    ] as const) {
      expect({ workspace, admission: await admit(request({ workspace })) }).toEqual({
        workspace,
        admission: { admitted: false, reason: expect.stringMatching(why) },
      });
    }
    // Without floors: the worker's own workspace is the only root.
    const defaults = createAdmitConversation({ defaultWorkspace: inside });
    expect(await defaults(request({ workspace: root }))).toMatchObject({ admitted: false });
    expect(await defaults(request({ workspace: inside, approval: { mode: 'auto' } }))).toMatchObject({
      admitted: true,
    });
  });
});
