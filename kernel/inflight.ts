/**
 * The emits still waiting for their handlers, so that one which never settles
 * can be named and answered. An intrusive linked list rather than a Set: adding
 * and removing cost a few pointer writes, with no hashing on the event hot path.
 */
import type { Decision } from '../sdk/events.js';

export interface Inflight {
  /** The watchdog's tick when the emit began (a counter, not a clock: reading the clock per emit is measurable). */
  readonly started: number;
  prev: Inflight | undefined;
  next: Inflight | undefined;
  /** Answers the caller once; later calls do nothing. */
  finish(decision: Decision): void;
}

export class InflightList {
  private head: Inflight | undefined;

  get empty(): boolean {
    return this.head === undefined;
  }

  add(item: Inflight): void {
    item.prev = undefined;
    item.next = this.head;
    if (this.head) this.head.prev = item;
    this.head = item;
  }

  remove(item: Inflight): void {
    if (item.prev) item.prev.next = item.next;
    else if (this.head === item) this.head = item.next;
    if (item.next) item.next.prev = item.prev;
    item.prev = item.next = undefined;
  }

  /** A snapshot, so callers may remove items while walking it. */
  items(): Inflight[] {
    const list: Inflight[] = [];
    for (let item = this.head; item; item = item.next) list.push(item);
    return list;
  }
}
