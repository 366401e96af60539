// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` in plain strings is the config syntax under test, not a mistaken template.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/sources/config/config-error.js';
import { parseSourcesConfig } from '../../src/sources/config/parse-config.js';

const FILE = '.pulse/sources.json';
const KEY = 'sk-test-0123456789abcdef';

const parse = (reflection: unknown, env: Record<string, string | undefined> = { OPENAI_API_KEY: KEY }) =>
  parseSourcesConfig(JSON.stringify({ reflection }), { file: FILE, env });

const errorOf = (run: () => unknown): ConfigError => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError, but nothing was thrown');
};

describe('parseSourcesConfig: the model thinker', () => {
  it('reads the endpoint, expands the key from the environment and keeps it as a secret', () => {
    const config = parse({
      thinker: 'model',
      model: {
        base_url: 'http://127.0.0.1:11434/v1/',
        model: 'qwen2.5:7b-instruct',
        api_key: '${OPENAI_API_KEY}',
      },
    });
    expect(config.reflection.thinker).toBe('model');
    expect(config.reflection.model).toEqual({
      baseUrl: 'http://127.0.0.1:11434/v1',
      model: 'qwen2.5:7b-instruct',
      apiKey: KEY,
      timeoutMs: 30_000,
      maxEvents: 50,
    });
    expect(config.secrets).toContain(KEY);
  });

  it('keeps a key written in the file as a secret too, and needs none for a local server', () => {
    const literal = parse({
      thinker: 'model',
      model: { base_url: 'http://localhost:1234/v1', model: 'm', api_key: 'lm-studio' },
    });
    expect(literal.secrets).toContain('lm-studio');
    const keyless = parse({
      thinker: 'model',
      model: { base_url: 'http://localhost:1234/v1', model: 'm', timeout_sec: 5, max_events: 10 },
    });
    expect(keyless.reflection.model).toMatchObject({ apiKey: null, timeoutMs: 5_000, maxEvents: 10 });
    expect(keyless.secrets).toEqual([]);
  });

  it.each([
    [{ thinker: 'model' }, 'reflection.model', '"thinker": "model" needs the endpoint', '"base_url"'],
    [
      { thinker: 'model', model: 'gpt-4o' },
      'reflection.model',
      'expected object, got string',
      'Write the block as',
    ],
    [
      { thinker: 'model', model: { base_url: 'http://h/v1' } },
      'reflection.model.model',
      '"model" is missing',
      'qwen2.5',
    ],
    [
      { thinker: 'model', model: { base_url: 'localhost:11434', model: 'm' } },
      'reflection.model.base_url',
      'must be http:// or https://',
      'http://127.0.0.1:11434/v1',
    ],
    [
      { thinker: 'model', model: { base_url: 'not a url', model: 'm' } },
      'reflection.model.base_url',
      'is not an absolute URL',
      'API root',
    ],
    [
      { thinker: 'model', model: { base_url: 'http://h/v1', model: 'm', max_events: 0 } },
      'reflection.model.max_events',
      'at least 1',
      'whole number',
    ],
    [
      { thinker: 'model', model: { base_url: 'http://h/v1', model: 'm', timeout_sec: 3600 } },
      'reflection.model.timeout_sec',
      'at most 600',
      '"timeout_sec": 30',
    ],
  ])('refuses %j at %s, naming the problem and a fix', (reflection, jsonPath, problem, fix) => {
    const error = errorOf(() => parse(reflection));
    expect(error.jsonPath).toBe(jsonPath);
    expect(error.message).toContain(problem);
    expect(error.message).toContain(fix);
  });

  it('refuses an unset ${VAR} in the key, naming the variable, and never prints a key', () => {
    const error = errorOf(() =>
      parse(
        { thinker: 'model', model: { base_url: 'http://h/v1', model: 'm', api_key: '${MISSING_KEY}' } },
        {},
      ),
    );
    expect(error.jsonPath).toBe('reflection.model.api_key');
    expect(error.message).toContain('${MISSING_KEY} is not set');
    const wrong = errorOf(() =>
      parse({ thinker: 'model', model: { base_url: KEY, model: 'm', api_key: KEY } }),
    );
    expect(wrong.message).not.toContain(KEY);
  });

  it('warns that a model block without "thinker": "model" is ignored, and accepts "sampling" and retry_backoff_sec', () => {
    const config = parse({
      thinker: 'sampling',
      retry_backoff_sec: 60,
      model: { base_url: 'http://h/v1', model: 'm' },
    });
    expect(config.reflection).toMatchObject({
      thinker: 'sampling',
      model: null,
      gate: { retryCapMs: 60_000 },
    });
    expect(config.warnings).toEqual([
      expect.stringContaining('reflection.model is ignored: it is used only with "thinker": "model"'),
    ]);
  });

  it('reads retry_backoff_sec as the cap of the retries, and clamps one above 5 minutes, saying so', () => {
    const config = parse({ retry_backoff_sec: 360 });
    expect(config.reflection.gate).toEqual({ retryCapMs: 300_000 });
    expect(config.warnings).toEqual([
      '.pulse/sources.json: reflection.retry_backoff_sec is 360 s, more than the 300 s a failing thinker may wait at most: 300 s is used. It is the longest wait between retries: a failed thought is asked again at the next reflection (reflect_every_sec), then, while its endpoint fails, twice as long with each failure in a row.',
    ]);
  });
});
