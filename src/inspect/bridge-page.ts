/** The hosted inspector UI the bridge page embeds. */
export const STATELY_INSPECTOR_URL = 'https://stately.ai/inspect';

/**
 * The relay's page, as `@statelyai/inspect/server` serves it: the Stately inspector in an
 * iframe, fed every WebSocket message by postMessage once it says `@statelyai.connected`
 * (buffered until then). Unlike the library's page it connects back to whatever host and port
 * served it (so `--inspect-port 0` works) and listens only to its own iframe.
 */
export const bridgePage = (inspectorUrl = STATELY_INSPECTOR_URL): string => `<!DOCTYPE html>
<html>
<head>
  <meta charset="utf-8">
  <title>pulse: Stately inspector</title>
  <style>
    * { margin: 0; padding: 0; }
    html, body { height: 100%; }
    iframe { width: 100%; height: 100%; border: none; }
  </style>
</head>
<body>
  <iframe id="inspector" src="${inspectorUrl}"></iframe>
  <script>
    const iframe = document.getElementById('inspector');
    const buffer = [];
    let connected = false;
    window.addEventListener('message', (e) => {
      if (e.source !== iframe.contentWindow || !e.data || e.data.type !== '@statelyai.connected') return;
      connected = true;
      for (const event of buffer) iframe.contentWindow.postMessage(event, '*');
      buffer.length = 0;
    });
    const ws = new WebSocket('ws://' + location.host);
    ws.onmessage = (event) => {
      const data = JSON.parse(event.data);
      if (connected) iframe.contentWindow.postMessage(data, '*');
      else buffer.push(data);
    };
  </script>
</body>
</html>
`;
