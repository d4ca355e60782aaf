import type { DeploymentHealthEntry } from '../../policy/deployment-health.js';
import type { Api } from './api.js';
import { html, type View } from './html.js';
import { useLoaded } from './use-loaded.js';

const STATE_TEXT: Record<DeploymentHealthEntry['state'], string> = {
  healthy: 'healthy',
  degraded: 'degraded (failing, still served)',
  open: 'open (not served until it cools down)',
  half_open: 'half open (trying again)',
};

/** Each deployment's circuit breaker, as this instance sees it. */
export function Health({ api }: { api: Api }): View {
  const health = useLoaded(() => api.get<{ deployments: DeploymentHealthEntry[] }>('health'), '');
  const deployments = health.value?.deployments;

  return html`<section aria-labelledby="health-title">
    <h2 id="health-title">Deployment health</h2>
    <div class="toolbar"><button type="button" onClick=${health.reload}>Refresh</button></div>
    ${health.error && html`<p role="alert" class="error">${health.error}</p>`}
    ${
      deployments &&
      html`<table>
        <caption>Deployments (this instance's view)</caption>
        <thead><tr><th scope="col">Deployment</th><th scope="col">Provider</th><th scope="col">State</th></tr></thead>
        <tbody>
          ${deployments.map(
            (entry) => html`<tr key=${entry.deployment}>
              <th scope="row">${entry.deployment}</th><td>${entry.provider}</td><td class=${`state-${entry.state}`}>${STATE_TEXT[entry.state]}</td>
            </tr>`,
          )}
          ${deployments.length === 0 && html`<tr><td colspan="3">No deployment has served a request yet.</td></tr>`}
        </tbody>
      </table>`
    }
  </section>`;
}
