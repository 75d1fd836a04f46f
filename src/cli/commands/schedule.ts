import type { ConversationOptionsInput } from '../../shared/conversation-options';
import { type ConversationScheduleListing, ConversationSchedules } from '../../client/conversation-schedules';
import { type Cleanups, log } from '../cleanups';
import { connectAgent } from '../connect-agent';
import { CONVERSATION_OPTION_FLAGS, conversationOptionsFromFlags } from '../conversation-flags';
import { conversationIdArg, durationArg, namedPositionals, parseCommandArgs } from '../parse-command-args';
import { UsageError } from '../usage-error';

export type ScheduleArgs =
  | {
      action: 'create';
      prompt: string;
      cron: string;
      scheduleId?: string;
      options: ConversationOptionsInput;
      json: boolean;
    }
  | { action: 'list'; json: boolean }
  | { action: 'delete' | 'trigger'; scheduleId: string; json: boolean };

const ACTIONS = new Set(['list', 'delete', 'trigger']);

export function parseScheduleArgs(args: string[]): ScheduleArgs {
  const { values, positionals } = parseCommandArgs('schedule', {
    args,
    allowPositionals: true,
    options: {
      ...CONVERSATION_OPTION_FLAGS,
      cron: { type: 'string' },
      id: { type: 'string' },
      'idle-timeout': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const [first, ...rest] = positionals;
  if (first !== undefined && ACTIONS.has(first)) {
    const creationFlags = ['cron', 'id', 'idle-timeout', ...Object.keys(CONVERSATION_OPTION_FLAGS)].filter(
      (flag) => values[flag as keyof typeof values] !== undefined,
    );
    if (creationFlags.length) throw new UsageError(`schedule ${first} takes no --${creationFlags[0]}`);
    if (first === 'list') {
      namedPositionals('schedule list', rest, [] as const);
      return { action: 'list', json: values.json };
    }
    const { SCHEDULE_ID } = namedPositionals(`schedule ${first}`, rest, ['SCHEDULE_ID'] as const);
    return { action: first as 'delete' | 'trigger', scheduleId: SCHEDULE_ID, json: values.json };
  }
  const prompt = positionals.join(' ').trim();
  if (!prompt)
    throw new UsageError('schedule needs a prompt, or list, delete SCHEDULE_ID or trigger SCHEDULE_ID');
  if (!values.cron?.trim()) throw new UsageError('schedule needs --cron "<minute hour day month weekday>"');
  const options = conversationOptionsFromFlags(values);
  const idleTimeout = values['idle-timeout'];
  if (idleTimeout !== undefined) options.idleTimeoutMs = durationArg(idleTimeout, '--idle-timeout');
  return {
    action: 'create',
    prompt,
    cron: values.cron.trim(),
    ...(values.id !== undefined ? { scheduleId: conversationIdArg(values.id) } : {}),
    options,
    json: values.json,
  };
}

export function formatScheduleListing(listing: ConversationScheduleListing): string {
  const parts = [
    listing.scheduleId,
    listing.cron ? `cron "${listing.cron}"` : undefined,
    listing.paused ? 'paused' : listing.nextStartAt ? `next ${listing.nextStartAt.toISOString()}` : undefined,
    listing.recentConversations.length ? `latest ${listing.recentConversations.at(-1)}` : undefined,
    listing.prompt !== undefined
      ? JSON.stringify(listing.prompt.length > 80 ? `${listing.prompt.slice(0, 80)}…` : listing.prompt)
      : undefined,
  ];
  return parts.filter(Boolean).join('  ');
}

/**
 * `schedule`: conversations started on a Temporal schedule, each with the prompt as its first
 * message; `schedule list`, `schedule delete ID`, `schedule trigger ID` (start one now).
 */
export async function scheduleCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const schedule = parseScheduleArgs(args);
  const { client, settings } = await connectAgent(cleanups, { startServer: false });
  const schedules = new ConversationSchedules(client, settings.taskQueue);
  const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
  switch (schedule.action) {
    case 'create': {
      const scheduleId = await schedules.create({
        cron: schedule.cron,
        prompt: schedule.prompt,
        options: schedule.options,
        ...(schedule.scheduleId !== undefined ? { scheduleId: schedule.scheduleId } : {}),
      });
      if (schedule.json) print({ scheduleId });
      else {
        process.stdout.write(`${scheduleId}\n`);
        log(
          `schedule ${scheduleId} starts a conversation on task queue ${settings.taskQueue} at "${schedule.cron}" (UTC); each is named ${scheduleId}-<start time>`,
        );
      }
      return 0;
    }
    case 'list': {
      let shown = 0;
      for await (const listing of schedules.list()) {
        shown++;
        if (schedule.json) print(listing);
        else process.stdout.write(`${formatScheduleListing(listing)}\n`);
      }
      if (shown === 0 && !schedule.json) log('no conversation schedules');
      return 0;
    }
    case 'trigger':
      await schedules.trigger(schedule.scheduleId);
      if (schedule.json) print({ scheduleId: schedule.scheduleId, triggered: true });
      else log(`schedule ${schedule.scheduleId} triggered: a conversation starts now`);
      return 0;
    case 'delete':
      await schedules.delete(schedule.scheduleId);
      if (schedule.json) print({ scheduleId: schedule.scheduleId, deleted: true });
      else log(`schedule ${schedule.scheduleId} deleted; the conversations it started go on`);
      return 0;
  }
}
