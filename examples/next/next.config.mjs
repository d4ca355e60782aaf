/** @type {import('next').NextConfig} */
export default {
  // The transport suite runs its own `next dev` in `.next-test`, so that it never meets yours.
  distDir: process.env.NEXT_DIST_DIR || '.next',
  // Loaded from node_modules at run time rather than bundled into the route.
  serverExternalPackages: ['undici', 'busboy', '@whatwg-node/server'],
};
