import type { ConversationOptions } from '../shared/conversation-options';
import {
  type ToolDescriptor,
  type ToolDescriptorInput,
  ToolDescriptorSchema,
  type ToolListing,
} from '../shared/tool-descriptor';
import { applyToolPolicyPipeline } from '../shared/tool-policy';
import { catalogActivities } from './activity-proxies';
import { conversationToolPolicySteps } from './conversation-tool-policy';

/** The worker's tools, as its `listTools` activity gives them, with what it had to say about them. */
export async function lookUpTools(): Promise<{
  tools: ReadonlyMap<string, ToolDescriptor>;
  warnings: string[];
}> {
  // Workers before external tools returned the bare list, which recorded histories replay.
  const listing: ToolListing | ToolDescriptorInput[] = await catalogActivities.listTools();
  const { tools, warnings } = Array.isArray(listing) ? { tools: listing, warnings: [] } : listing;
  // Parsed so descriptors recorded by older workers get today's defaults (no risk recorded: never asks).
  const descriptors = tools.map((descriptor) => ToolDescriptorSchema.parse(descriptor));
  return { tools: new Map(descriptors.map((descriptor) => [descriptor.name, descriptor])), warnings };
}

/** The worker's tools a run offers: those the conversation's policy steps keep. */
export class OfferedTools {
  /** The descriptors of the tools offered, by name. */
  readonly descriptors: ReadonlyMap<string, ToolDescriptor>;
  /** What the policy steps got wrong (a name that matches nothing, say), for the event log. */
  readonly warnings: string[];

  constructor(worker: ReadonlyMap<string, ToolDescriptor>, options: ConversationOptions) {
    const policy = applyToolPolicyPipeline([...worker.keys()], conversationToolPolicySteps(options));
    this.descriptors = new Map(policy.tools.map((name) => [name, worker.get(name)!]));
    this.warnings = policy.warnings;
  }

  /** The names the model is shown: `ownerOnly` tools only in a run every message of which came from an owner. */
  toModel(ownersRun: boolean): string[] {
    const names = [...this.descriptors.keys()];
    return ownersRun ? names : names.filter((name) => !this.descriptors.get(name)!.ownerOnly);
  }
}
