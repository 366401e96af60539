import { parseDependencyTree } from 'dpdm';
import { describe, expect, it } from 'vitest';

type Tree = Awaited<ReturnType<typeof parseDependencyTree>>;

/** What `pulse start` loads before its first answer: the daemon's static imports (dynamic ones load when used). */
const startPath = (): Promise<Tree> =>
  parseDependencyTree(['src/daemon/daemon.ts'], { transform: true, skipDynamicImports: true });

describe("the daemon's start path", () => {
  it("never loads sources.json's server schemas, which only a project with a sources.json needs", async () => {
    const loaded = Object.keys(await startPath());
    expect(loaded).toContain('src/system/ask-actors.ts');
    expect(loaded).not.toContain('src/sources/config/server-config.ts');
  }, 60_000);

  it('never loads the MCP SDK, whose import builds every spec schema: the first /mcp request loads it', async () => {
    const tree = await startPath();
    const sdkImports = Object.entries(tree).flatMap(([file, imports]) =>
      (imports ?? [])
        .filter((d) => d.request.startsWith('@modelcontextprotocol/') && d.kind !== 'DynamicImport')
        .map((d) => `${file} → ${d.request}`),
    );
    expect(Object.keys(tree)).toContain('src/http/host-guard.ts');
    expect(sdkImports).toEqual([]);
  }, 60_000);
});
