/**
 * The dashboard's static files (index.html, its script and styles), served by the admin handler
 * at `<admin base>/` and `<admin base>/assets/…` without the admin key: they hold no data, the page
 * asks for the key and sends it on every API call. `undefined`: not a dashboard path.
 */
export async function dashboardResponse(_path: string): Promise<Response | undefined> {
  return undefined;
}
