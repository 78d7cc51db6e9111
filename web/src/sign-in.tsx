/**
 * Shown when the gateway refused the credentials — a 401 on opening, or mid-session a stream ended
 * UNAUTHENTICATED (its token revoked) or a query answered 401 (the token expired): a form for a
 * Kubernetes token (kept in this tab's session storage, auth.ts). Submitting reloads the page, so every
 * query and stream starts over with it.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { authState, storeToken } from './auth.js';
import { useStore } from './store.js';

export function SignIn() {
  const auth = useStore(authState, (s) => s);
  const [token, setToken] = useState('');
  const input = useRef<HTMLInputElement>(null);
  // Mid-session the page may be scrolled anywhere: bring the form into view, ready to type in.
  useEffect(() => {
    if (auth.required) input.current?.focus();
  }, [auth.required]);
  if (!auth.required) return null;
  return (
    <section class="signin panel" aria-labelledby="signin-title" data-testid="sign-in">
      <form
        class="panel-body"
        onSubmit={(e) => {
          e.preventDefault();
          storeToken(token);
          location.reload();
        }}
      >
        <h2 id="signin-title">Sign in to the gateway</h2>
        <p class="bad-text" data-testid="sign-in-message">
          {auth.message}
        </p>
        {auth.detail ? <p class="dim">The gateway said: {auth.detail}</p> : null}
        <p class="dim">
          Paste a Kubernetes bearer token (for example from{' '}
          <code>kubectl create token &lt;serviceaccount&gt;</code>
          ), or open the login link the demo printed. You see what the token's RBAC lets it list. The token
          stays in this browser tab.
        </p>
        <div class="signin-row">
          <input
            ref={input}
            type="password"
            autocomplete="off"
            placeholder="token"
            aria-label="token"
            value={token}
            onInput={(e) => setToken((e.target as HTMLInputElement).value)}
          />
          <button class="btn" type="submit" disabled={!token.trim()}>
            Sign in
          </button>
        </div>
      </form>
    </section>
  );
}
