import 'uplot/dist/uPlot.min.css';
import { render } from 'preact';
import { App } from './app.js';
import { adoptTokenFromLocation } from './auth.js';
import { startLiveData } from './live.js';

const root = document.getElementById('app');
// Before any request: a login link's token goes to session storage, out of the address bar.
adoptTokenFromLocation();
if (root) {
  root.textContent = '';
  const live = startLiveData();
  render(<App store={live.store} />, root);
}
