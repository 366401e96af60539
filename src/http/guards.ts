import type { Context, MiddlewareHandler } from 'hono';

/** One guard's verdict on a request, taken synchronously: its refusal, or undefined to let it pass. */
export type GuardCheck = (c: Context) => Response | undefined;

/** A guard as a middleware of its own, for an app that needs just that one. */
export const guardMiddleware = (check: GuardCheck): MiddlewareHandler =>
  async function guard(c, next) {
    return check(c) ?? next();
  };

/**
 * The checks in order as one middleware, then `then`: the first refusal answers, as a chain of
 * one middleware a guard would, but without an async step per guard (a tenth of a session call's
 * time on the daemon's 2025-11-25 path, bench/call-cost/report.ts).
 */
export const guardsInOrder = (checks: readonly GuardCheck[], then: MiddlewareHandler): MiddlewareHandler =>
  function guards(c, next) {
    for (const check of checks) {
      const refusal = check(c);
      if (refusal !== undefined) return Promise.resolve(refusal);
    }
    return then(c, next);
  };

/**
 * `middleware` with `rest` after it, as one middleware: what `rest` answers without calling on
 * (a refusal) becomes the response, since `middleware` awaits its `next` without returning it.
 */
export const thenMiddleware =
  (middleware: MiddlewareHandler, rest: MiddlewareHandler): MiddlewareHandler =>
  (c, next) =>
    middleware(c, async () => {
      const answered = await rest(c, next);
      if (answered instanceof Response) c.res = answered;
    });
