import { render } from 'preact';
import './styles.css';
import { App } from './app';
import { guardUnsavedEdits } from './components/unsaved';

guardUnsavedEdits();

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(<App />, root);
}
