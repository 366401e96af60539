import { randomBytes } from 'node:crypto';

/** A clock in microseconds since the epoch. */
export type MicroClock = () => bigint;

export const systemMicroClock: MicroClock = () =>
  BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000));

const pad = (value: number, width = 2) => String(value).padStart(width, '0');

/** `2026-11-29T10:15:00.123456Z` and `20261129T101500123456Z` for one instant. */
export const formatMicros = (micros: bigint): { iso: string; compact: string } => {
  const date = new Date(Number(micros / 1000n));
  const fraction = pad(Number(micros % 1_000_000n), 6);
  const y = pad(date.getUTCFullYear(), 4);
  const mo = pad(date.getUTCMonth() + 1);
  const d = pad(date.getUTCDate());
  const h = pad(date.getUTCHours());
  const mi = pad(date.getUTCMinutes());
  const s = pad(date.getUTCSeconds());
  return {
    iso: `${y}-${mo}-${d}T${h}:${mi}:${s}.${fraction}Z`,
    compact: `${y}${mo}${d}T${h}${mi}${s}${fraction}Z`,
  };
};

/**
 * Makes event ids in PulseAgent's format (`evt_<UTC µs>_<8 hex>`) whose time part never goes
 * backwards, so ids sort in creation order even when two events share a microsecond.
 */
export const createEventStamper = (clock: MicroClock = systemMicroClock) => {
  let last = 0n;
  return {
    /** Never hand out a time at or before one already in the log. */
    observe(id: string): void {
      const match = /^evt_(\d{8}T\d{12})Z_/.exec(id);
      if (!match) return;
      const [date, time] = match[1]!.split('T') as [string, string];
      const ms = Date.UTC(
        +date.slice(0, 4),
        +date.slice(4, 6) - 1,
        +date.slice(6, 8),
        +time.slice(0, 2),
        +time.slice(2, 4),
        +time.slice(4, 6),
      );
      const micros = BigInt(ms) * 1000n + BigInt(time.slice(6, 12));
      if (micros > last) last = micros;
    },
    next(): { id: string; timestamp: string } {
      const now = clock();
      last = now > last ? now : last + 1n;
      const { iso, compact } = formatMicros(last);
      return { id: `evt_${compact}_${randomBytes(4).toString('hex')}`, timestamp: iso };
    },
  };
};

export type EventStamper = ReturnType<typeof createEventStamper>;
