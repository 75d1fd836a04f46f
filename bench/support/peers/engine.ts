import type { Directive } from '../model-server';
import type { WorkerProcess } from '../worker-process';

/** The benches of the peer comparison (bench/peers.ts). */
export type PeerBench = 'turn' | 'throughput' | 'memory' | 'state' | 'crash' | 'resume';

/** A conversation on an engine, driven turn by turn. */
export interface PeerConversation {
  readonly id: string;
  readonly turns: number;
  /** Sends the next message and resolves once the engine has durably finished the turn. */
  runTurn(directive?: Omit<Directive, 'c' | 't'>): Promise<void>;
}

/**
 * One application on an engine: the service processes that run its model and tool steps (one at a
 * time) and the conversations they serve. A service started after another stopped or was killed
 * takes over the same conversations, as a redeployed or restarted process does.
 */
export interface PeerDeployment {
  /** Starts a service process; resolves once it serves. */
  startService(): Promise<WorkerProcess>;
  /** Starts a conversation (on the service now running). */
  open(id: string): Promise<PeerConversation>;
  /** The bytes the engine keeps for the conversation now (history, journal, checkpoints, state). */
  stateBytes(conversation: PeerConversation): Promise<number>;
  /** Stops the service process now running, if any. */
  stop(): Promise<void>;
}

/** A durable execution engine compared in the peer bench. */
export interface PeerEngine {
  name: string;
  /**
   * Starts what the engine needs beside the service (its server, its database) and installs
   * nothing; resolves with what it is ("Restate server 1.7.12, ..."), rejects with why it cannot run.
   */
  start(): Promise<string>;
  deployment(name: string): Promise<PeerDeployment>;
  /** The directive whose tool call the crash bench kills the service during; the tool reports its start. */
  crashDirective: Omit<Directive, 'c' | 't'>;
  /** What it cannot do of the benches, and why. */
  cannot: Partial<Record<PeerBench, string>>;
  stop(): Promise<void>;
}
