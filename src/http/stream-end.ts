/**
 * The same response, its body passed through unchanged, calling `onEnd` once when the body
 * ends, fails or is cancelled (the client went away); at once when there is no body.
 */
export const onStreamEnd = (response: Response, onEnd: () => void): Response => {
  const source = response.body;
  if (source === null) {
    onEnd();
    return response;
  }
  const reader = source.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (!done) return controller.enqueue(value);
        onEnd();
        controller.close();
      } catch (error) {
        onEnd();
        controller.error(error);
      }
    },
    cancel(reason) {
      onEnd();
      return reader.cancel(reason);
    },
  });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
};
