import { parseDependencyTree } from 'dpdm';
import { describe, expect, it } from 'vitest';

/** What `pulse start` loads before its first answer: the daemon's static imports (dynamic ones load when used). */
const startPath = async (): Promise<string[]> =>
  Object.keys(
    await parseDependencyTree(['src/daemon/daemon.ts'], { transform: true, skipDynamicImports: true }),
  );

describe("the daemon's start path", () => {
  it("never loads sources.json's server schemas, which only a project with a sources.json needs", async () => {
    const loaded = await startPath();
    expect(loaded).toContain('src/system/ask-actors.ts');
    expect(loaded).not.toContain('src/sources/config/server-config.ts');
  }, 60_000);
});
