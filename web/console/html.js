import { h } from 'preact';
import htm from 'htm';

/** Tagged templates that build Preact elements (no JSX, so no compile step but bundling). */
export const html = htm.bind(h);
