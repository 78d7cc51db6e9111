import 'uplot/dist/uPlot.min.css';
import { render } from 'preact';
import { App } from './app.js';
import { startLiveData } from './live.js';

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  const live = startLiveData();
  render(<App store={live.store} />, root);
}
