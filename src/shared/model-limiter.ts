import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { z } from 'zod';

/** The workflow type of the limiter entity; one execution per model endpoint. */
export const MODEL_LIMITER_WORKFLOW_TYPE = 'modelLimiter';

/** The limiter's workflow id for an endpoint key (`modelEndpointKey`). */
export function modelLimiterWorkflowId(endpointKey: string): string {
  return `model-limiter:${endpointKey}`;
}

/**
 * What the fleet holds one model endpoint to. Each request carries the limits its worker was given,
 * and the limiter applies the latest it received: workers of one fleet are meant to agree.
 */
export const ModelLimitsSchema = z.strictObject({
  /** Model calls in flight at once across the fleet; unlimited when absent. */
  maxConcurrent: z.number().int().min(1).optional(),
  /** Model calls started per second across the fleet; unlimited when absent. */
  maxRps: z.number().positive().optional(),
  /** How long a lease lasts unless its holder renews it (every third of it): a dead worker's lease comes back after this. */
  leaseTtlMs: z.number().int().min(100),
});
export type ModelLimits = z.infer<typeof ModelLimitsSchema>;

export const LeaseRequestSchema = z.strictObject({
  /** Unique per activity attempt; asking again with it keeps its place in the queue. */
  ticket: z.string().min(1).max(1_000),
  /** The fairness key of the agent: leases go round-robin between agents... */
  agent: z.string().min(1).max(200),
  /** ...and within an agent round-robin between conversation trees (a conversation and its sub-agents). */
  tree: z.string().min(1).max(1_000),
  limits: ModelLimitsSchema,
});
export type LeaseRequest = z.infer<typeof LeaseRequestSchema>;

/** `granted: false` means ask again with the same ticket (the limiter was handing over to a new run). */
export interface LeaseAnswer {
  granted: boolean;
}

export type LeaseOutcome = 'ok' | 'rate_limited' | 'failed';

export interface LeaseRelease {
  ticket: string;
  outcome: LeaseOutcome;
  /** What the endpoint's Retry-After asked for, with a `rate_limited` outcome. */
  retryAfterMs?: number;
}

/** Waits until the ticket holds a lease (update-with-start, so the first caller starts the limiter). */
export const acquireModelLeaseUpdate = defineUpdate<LeaseAnswer, [LeaseRequest]>('acquireModelLease');
/** The holder still runs: its lease lasts another `leaseTtlMs`. */
export const renewModelLeaseSignal = defineSignal<[{ ticket: string }]>('renewModelLease');
/** The call ended (or its caller stopped waiting): the lease or the place in the queue is given up. */
export const releaseModelLeaseSignal = defineSignal<[LeaseRelease]>('releaseModelLease');

export interface ModelLimiterStatus {
  limits: ModelLimits;
  /** Leases held now, and calls waiting for one. */
  held: number;
  waiting: number;
  /** Grants are paused until then (epoch ms) after a 429; 0 or past when not paused. */
  pausedUntilMs: number;
}

/** What the limiter holds and queues now (`temporal workflow query --name status`). */
export const modelLimiterStatusQuery = defineQuery<ModelLimiterStatus>('status');

interface TreeQueue {
  tree: string;
  tickets: string[];
}

interface AgentQueue {
  agent: string;
  /** Served round-robin: the tree at the front goes next, then moves to the back. */
  trees: TreeQueue[];
}

interface Lease {
  ticket: string;
  expiresAtMs: number;
}

/** The limiter's whole state, plain data so continue-as-new carries it. */
export interface LeaseBookState {
  limits: ModelLimits;
  /** Served round-robin: the agent at the front goes next, then moves to the back. */
  waiting: AgentQueue[];
  leases: Lease[];
  /** No grants before this (a 429 paused the endpoint). */
  pausedUntilMs: number;
  /** The latest pause's length; 0 once a call succeeds. */
  pauseMs: number;
  /** After a pause one lease at a time, until a call succeeds. */
  probing: boolean;
  /** No grants before this (the rate limit spaces them `1000 / maxRps` ms apart). */
  nextGrantAtMs: number;
}

export interface ModelLimiterInput {
  /** The limits of the worker that started it; every request brings its own. */
  limits: ModelLimits;
  /** What the previous run handed over. */
  carried?: LeaseBookState;
  /**
   * Continues as new once a run's history has this many events, besides whenever Temporal suggests
   * it (the only reason when absent, as a model call starts it); handed on to the next run. Whoever
   * starts the limiter first may set it (a test, to see a hand-over without thousands of calls).
   */
  maxHistoryEvents?: number;
}
