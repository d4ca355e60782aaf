import { expect, it } from 'vitest';
import { MAX_TOOLS_PER_SERVER, ToolLabeler } from '../../src/telemetry/metrics/tool-label.js';

it('keeps each server’s first tool names as labels and counts the rest, refusals and unknown servers as _OTHER', () => {
  const labels = new ToolLabeler();
  for (let i = 0; i < MAX_TOOLS_PER_SERVER; i++) expect(labels.of({ server: 'github', tool: `tool${i}`, outcome: 'tool_error' }).tool).toBe(`tool${i}`);
  // A client inventing names under a server it may use stops growing the series here.
  expect(labels.of({ server: 'github', tool: 'one_more', outcome: 'ok' })).toEqual({ server: 'github', tool: '_OTHER' });
  expect(labels.of({ server: 'github', tool: 'tool7', outcome: 'ok' })).toEqual({ server: 'github', tool: 'tool7' });
  // Another server has its own allowance.
  expect(labels.of({ server: 'jira', tool: 'search', outcome: 'ok' })).toEqual({ server: 'jira', tool: 'search' });
  expect(labels.of({ server: 'jira', tool: 'made_up', outcome: 'refused' })).toEqual({ server: 'jira', tool: '_OTHER' });
  expect(labels.of({ server: '', tool: 'nowhere__x', outcome: 'refused' })).toEqual({ server: '_OTHER', tool: '_OTHER' });
});
