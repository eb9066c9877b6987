/** The `hooks` service: what a host (or another plugin) can ask of the hooks plugin. */
import type { AsyncSeriesBailHook } from 'tapable';
import type { EventName } from 'plinth/sdk';
import type { GlobalRateCounts, HookRateCounts } from './rate-limit.js';
import type { HookDefinition, PlanResult } from './types.js';

/** An `askAgent` hook's rendered prompt, handed to the host. */
export interface AskAgentRequest {
  readonly hook: Pick<HookDefinition, 'id' | 'name' | 'source'>;
  readonly event: EventName;
  readonly prompt: string;
  readonly context: Readonly<Record<string, unknown>>;
}

export interface HooksService {
  /** Every hook definition, enabled or not, and the problems found while reading them. */
  definitions(): Promise<{ hooks: readonly HookDefinition[]; problems: readonly { code: string; message: string; hint?: string }[] }>;
  /** The external hooks' part of the last emit of `event` in this process. */
  lastRun(event: EventName): PlanResult | undefined;
  /** Rate-limit counts per hook and overall. */
  counts(): { hooks: HookRateCounts[]; global: GlobalRateCounts };
  /**
   * `askAgent` prompts. A tap that takes the prompt (hands it to its agent)
   * returns true; when no tap takes it, the prompt is added to the event's
   * system messages, so it reaches the model anyway.
   */
  readonly askAgent: AsyncSeriesBailHook<[AskAgentRequest], true | undefined>;
}

declare module 'plinth/sdk' {
  interface Services {
    hooks: HooksService;
  }
}
