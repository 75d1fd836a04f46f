import { EVENT_TEXT_PREVIEW_CHARS } from '../shared/constants';
import type { AssistantMessage, ToolCall, ToolResultMessage } from '../shared/messages';
import { okOutcome } from '../shared/tool-outcome';
import {
  RECEIVE_EVENT_TOOL_NAME,
  type RapConversationMessage,
  RapResultDetailsSchema,
  type UserChoiceAnswer,
} from '../shared/rap';
import type { EventLog } from './event-log';
import { workflowTime } from './workflow-time';

/** At most this many subscriptions per conversation (rap spec: runtimes SHOULD bound them). */
export const MAX_ACTIVE_SUBSCRIPTIONS = 100;
/** Events waiting for a run beyond this are dropped, oldest first, with an error event. */
const MAX_QUEUED_EVENTS = 1_000;

interface Subscription {
  toolName: string;
  /** The original call's arguments, as the model wrote them. */
  arguments: string;
}

interface PendingChoice {
  toolName: string;
  choices: string[];
  default: number;
  responseUrl: string;
}

interface QueuedEvent extends Subscription {
  toolCallId: string;
  text: string;
}

/** What continues with the conversation across continue-as-new. */
export interface CarriedRapThread {
  subscriptions: Array<[string, Subscription]>;
  events: QueuedEvent[];
  views: Record<string, Record<string, unknown>>;
  injected: number;
}

/**
 * The conversation's side of RAP: its active subscriptions (calls whose result said
 * `subscription: true`), subscription events waiting to enter the transcript, the tools' pending
 * user choices, and the latest content of each view. Fed by the `rapMessage` signal and by tool
 * results; everything here is workflow state, so a worker restart loses none of it.
 */
export class RapThread {
  private readonly subscriptions: Map<string, Subscription>;
  private readonly events: QueuedEvent[];
  private readonly views: Record<string, Record<string, unknown>>;
  private readonly choices = new Map<string, PendingChoice>();
  /** Numbers the synthetic calls, so each has an id of its own. */
  private injected: number;
  /** Tool calls of the run in progress that are still waiting for their result, by id. */
  private readonly inFlight = new Map<string, ToolCall>();

  constructor(
    private readonly log: EventLog,
    carried?: CarriedRapThread,
  ) {
    this.subscriptions = new Map(carried?.subscriptions ?? []);
    this.events = [...(carried?.events ?? [])];
    this.views = { ...(carried?.views ?? {}) };
    this.injected = carried?.injected ?? 0;
  }

  get hasEvents(): boolean {
    return this.events.length > 0;
  }

  activeSubscriptions(): string[] {
    return [...this.subscriptions.keys()];
  }

  viewContents(): Record<string, Record<string, unknown>> {
    return this.views;
  }

  carry(): CarriedRapThread {
    return {
      subscriptions: [...this.subscriptions],
      events: [...this.events],
      views: this.views,
      injected: this.injected,
    };
  }

  /** The calls of a turn, so callbacks that name them (choices, oauth) can say which tool asks. */
  callsStarted(calls: ToolCall[]): void {
    for (const call of calls) this.inFlight.set(call.id, call);
  }

  /** Results of a turn: a RAP result that started a subscription makes it active. */
  callsFinished(calls: ToolCall[], results: ToolResultMessage[], run: number): void {
    for (const result of results) {
      const call = calls.find((candidate) => candidate.id === result.toolCallId);
      this.inFlight.delete(result.toolCallId);
      this.choices.delete(result.toolCallId);
      if (!call || result.isError) continue;
      const details = RapResultDetailsSchema.safeParse(result.details);
      if (!details.success || !details.data.rap.subscription) continue;
      if (this.subscriptions.size >= MAX_ACTIVE_SUBSCRIPTIONS) {
        this.log.record(run, {
          type: 'error',
          message: `subscription ${call.id} (${call.name}) not tracked: this conversation has ${MAX_ACTIVE_SUBSCRIPTIONS} active subscriptions`,
        });
        continue;
      }
      this.subscriptions.set(call.id, { toolName: call.name, arguments: call.arguments });
    }
  }

  /** Ends a subscription; false when the conversation has no such active subscription. */
  cancel(toolCallId: string): boolean {
    return this.subscriptions.delete(toolCallId);
  }

  /** A checked callback message from the worker's RAP server. */
  receive(message: RapConversationMessage, run: number): void {
    switch (message.type) {
      case 'subscription_event': {
        const subscription = this.subscriptions.get(message.toolCallId);
        // Events for unknown or ended subscriptions are discarded (the server refuses most before this).
        if (!subscription) return;
        if (message.final) this.subscriptions.delete(message.toolCallId);
        if (this.events.length >= MAX_QUEUED_EVENTS) {
          const dropped = this.events.shift()!;
          this.log.record(run, {
            type: 'error',
            message: `subscription event of ${dropped.toolCallId} dropped: ${MAX_QUEUED_EVENTS} events were waiting`,
          });
        }
        this.events.push({ ...subscription, toolCallId: message.toolCallId, text: message.text });
        this.log.record(run, {
          type: 'subscription_event',
          toolCallId: message.toolCallId,
          toolName: subscription.toolName,
          text: message.text.slice(0, EVENT_TEXT_PREVIEW_CHARS),
          final: message.final ?? false,
        });
        return;
      }
      case 'user_choice': {
        const toolName = this.toolNameOf(message.toolCallId);
        const defaultIndex = Math.min(message.default, message.choices.length - 1);
        this.choices.set(message.toolCallId, {
          toolName,
          choices: message.choices,
          default: defaultIndex,
          responseUrl: message.responseUrl,
        });
        this.log.record(run, {
          type: 'user_choice_requested',
          toolCallId: message.toolCallId,
          toolName,
          prompt: message.prompt,
          choices: message.choices,
          default: defaultIndex,
        });
        return;
      }
      case 'oauth':
        this.log.record(run, {
          type: 'oauth_requested',
          toolCallId: message.toolCallId,
          toolName: this.toolNameOf(message.toolCallId),
          authUrl: message.authUrl,
        });
        return;
      case 'view_update':
        this.views[message.viewType] = message.content;
        this.log.record(run, {
          type: 'view_updated',
          toolCallId: message.toolCallId,
          viewType: message.viewType,
        });
        return;
    }
  }

  /** Throws (refusing the update) unless `answer` fits a pending choice. */
  checkChoice(answer: UserChoiceAnswer): void {
    const choice = this.choices.get(answer.toolCallId);
    if (!choice) throw new Error(`no choice is pending for tool call ${answer.toolCallId}`);
    if (answer.selected !== undefined && answer.selected >= choice.choices.length) {
      throw new Error(
        `choice ${answer.selected} is out of range: there are ${choice.choices.length} choices`,
      );
    }
  }

  /**
   * Takes the pending choice `answer` decides: where to send it and the index chosen (the default
   * when dismissed). `undo` puts it back when the selection could not be sent, so it can be answered again.
   */
  takeChoice(
    answer: UserChoiceAnswer,
    run: number,
  ): { responseUrl: string; selected: number; undo: (why: string) => void } {
    this.checkChoice(answer);
    const choice = this.choices.get(answer.toolCallId)!;
    this.choices.delete(answer.toolCallId);
    const selected = answer.selected ?? choice.default;
    return {
      responseUrl: choice.responseUrl,
      selected,
      undo: (why) => {
        if (this.inFlight.has(answer.toolCallId)) this.choices.set(answer.toolCallId, choice);
        this.log.record(run, {
          type: 'error',
          message: `choice ${selected} for ${answer.toolCallId} could not be sent to the tool: ${why}`,
        });
      },
    };
  }

  /** The tool got the selection. */
  choiceSent(answer: UserChoiceAnswer, selected: number, run: number): void {
    this.log.record(run, {
      type: 'user_choice_answered',
      toolCallId: answer.toolCallId,
      selected,
      ...(answer.by !== undefined ? { by: answer.by } : {}),
    });
  }

  /**
   * The waiting events as transcript messages (rap spec, "Synthetic Tool Calls"): for each, a call
   * of `receive_event__injected` naming the subscription, answered by the event's text.
   */
  takeEventMessages(model: string): Array<AssistantMessage | ToolResultMessage> {
    return this.events.splice(0).flatMap((event) => {
      const id = `${event.toolCallId}_event_${++this.injected}`;
      const timestamp = workflowTime();
      const call: ToolCall = {
        type: 'toolCall',
        id,
        name: RECEIVE_EVENT_TOOL_NAME,
        arguments: JSON.stringify({
          original_tool_name: event.toolName,
          original_tool_call_id: event.toolCallId,
          original_args: parseOrRaw(event.arguments),
        }),
      };
      return [
        { role: 'assistant', content: [call], stopReason: 'toolUse', model, timestamp },
        {
          role: 'toolResult',
          toolCallId: id,
          toolName: RECEIVE_EVENT_TOOL_NAME,
          ...okOutcome({ content: [{ type: 'text', text: event.text || '(empty event)' }] }),
          timestamp,
        },
      ];
    });
  }

  private toolNameOf(toolCallId: string): string {
    return this.inFlight.get(toolCallId)?.name ?? this.subscriptions.get(toolCallId)?.toolName ?? 'unknown';
  }
}

function parseOrRaw(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
