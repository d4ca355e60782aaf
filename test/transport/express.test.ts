import { buildApp } from '../../examples/express/app.ts';
import { listening } from './node-server.js';
import { transportSuite } from './suite.js';

transportSuite({
  name: 'Express',
  start: (options) => listening(buildApp(options).listen(0, '127.0.0.1'), '/ai'),
});
