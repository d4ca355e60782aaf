/** This package's version, for `trace.getTracer('infergate', version)`; a test keeps it equal to package.json's. */
export const INFERGATE_VERSION = '0.1.0';
