import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

/** What a bundler (Next, an edge build) makes of the upstream clients: stdio only in a chunk loaded on demand. */

describe('upstream clients in a bundle', () => {
  it('keep the stdio transport (child_process, cross-spawn) out of the code loaded at start', async () => {
    const { metafile } = await build({
      entryPoints: [new URL('../../src/mcp/upstreams.ts', import.meta.url).pathname],
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      outdir: '/tmp/infergate-upstream-bundle',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const outputs = Object.values(metafile.outputs);
    const entry = outputs.find((output) => output.entryPoint?.endsWith('src/mcp/upstreams.ts'));
    const staticInputs = new Set(Object.keys(entry!.inputs));
    for (const imported of entry!.imports)
      if (imported.kind === 'import-statement') for (const input of Object.keys(metafile.outputs[imported.path]?.inputs ?? {})) staticInputs.add(input);
    const dynamicInputs = outputs.filter((output) => output !== entry).flatMap((output) => Object.keys(output.inputs));
    expect([...staticInputs].filter((input) => /cross-spawn|client\/stdio\.js/.test(input))).toEqual([]);
    expect(dynamicInputs.some((input) => input.includes('client/stdio.js'))).toBe(true);
    expect(entry!.imports.some((imported) => imported.kind === 'dynamic-import')).toBe(true);
  });
});
