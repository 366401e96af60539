/** An HTTP source's answer to one call may be this large; a larger one fails the call, unread. */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/** The error a call gets when its answer outgrows the limit. */
export class AnswerTooLargeError extends Error {
  override name = 'AnswerTooLargeError';
}

/**
 * `fetch` for the HTTP client transport with a cap on each POST's answer, so a source that
 * answers hundreds of megabytes fails its poll instead of filling the daemon's memory (stdio
 * servers have the SDK's read buffer limit). GET event streams live for days and are not capped.
 */
export const boundedFetch =
  (limit = MAX_ANSWER_BYTES): typeof fetch =>
  async (input, init) => {
    const response = await fetch(input, init);
    if (init?.method !== 'POST' || response.body === null) return response;
    // A declared length bounds the body (the HTTP parser stops there), so it is checked once;
    // piping every answer through a counting stream cost a poll more than the rest of the call.
    const declared = response.headers.get('content-length');
    if (declared !== null && /^\d+$/.test(declared)) {
      if (Number(declared) <= limit) return response;
      await response.body.cancel();
      throw new AnswerTooLargeError(
        `the answer is over the ${limit}-byte limit (${declared} bytes declared)`,
      );
    }
    let size = 0;
    const capped = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          size += chunk.byteLength;
          if (size > limit) {
            controller.error(new AnswerTooLargeError(`the answer is over the ${limit}-byte limit`));
          } else {
            controller.enqueue(chunk);
          }
        },
      }),
    );
    return new Response(capped, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
