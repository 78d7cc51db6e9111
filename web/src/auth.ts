/**
 * The dashboard's credentials: a Kubernetes bearer token, kept in this tab's session storage (gone when
 * the tab closes, never in a cookie, so no other site can make the browser send it). It arrives in a
 * login link's fragment (`/#token=…`, which never reaches a server and is removed from the address bar
 * and history at once) or from the sign-in form shown when the gateway answers 401. A token the gateway
 * stops accepting mid-session (revoked, expired) is dropped, and the form shown again.
 */
import { Store } from './store.js';

export const TOKEN_KEY = 'nodeload.token';

/** The token of a `#token=…` fragment (other fragment parameters are kept); undefined without one. */
export function tokenFromFragment(hash: string): { token: string; rest: string } | undefined {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const token = params.get('token')?.trim();
  if (!token) return undefined;
  params.delete('token');
  const rest = params.toString();
  return { token, rest: rest ? `#${rest}` : '' };
}

type TokenStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

export interface AuthEnvironment {
  storage: TokenStorage;
  location: Pick<Location, 'hash' | 'pathname' | 'search'>;
  history: Pick<History, 'replaceState'>;
}

function browser(): AuthEnvironment {
  return { storage: sessionStorage, location, history };
}

/** Moves a login link's token into session storage and out of the address bar. */
export function adoptTokenFromLocation(env: AuthEnvironment = browser()): void {
  const found = tokenFromFragment(env.location.hash);
  if (!found) return;
  env.storage.setItem(TOKEN_KEY, found.token);
  env.history.replaceState(null, '', `${env.location.pathname}${env.location.search}${found.rest}`);
}

export function storedToken(storage: TokenStorage = sessionStorage): string | undefined {
  return storage.getItem(TOKEN_KEY) ?? undefined;
}

export function storeToken(token: string, storage: TokenStorage = sessionStorage): void {
  if (token.trim()) storage.setItem(TOKEN_KEY, token.trim());
  else storage.removeItem(TOKEN_KEY);
}

/**
 * The Authorization header for the gateway with `token` (the stored one, read once per request so a refusal
 * names the token it refused): nothing without a token (a gateway on --anonymous-user-port).
 */
export function authHeaders(token: string | undefined): Record<string, string> {
  return token ? { authorization: `Bearer ${token}` } : {};
}

/**
 * Whether the page must ask for a token: the gateway refused the credentials. `message` says why, in the
 * page's words; `detail` is the gateway's own reason when it differs.
 */
export const authState = new Store<{ required: boolean; message: string; detail: string }>({
  required: false,
  message: '',
  detail: '',
});

export const SESSION_ENDED_MESSAGE = 'Your session ended: the token was revoked or expired. Sign in again.';

/**
 * The gateway refused a request sent with `sentToken` (a 401, or an UNAUTHENTICATED error: a stream ended
 * because its token was revoked, a query whose token expired): that token is dropped from storage — only
 * if it is still the stored one, so a late answer cannot drop a token signed in with since — and the page
 * asks for a new one. With a token that was the session ending; without one (a page opened without a
 * login link) the gateway's message says what it needs. The first refusal's words stay.
 */
export function sessionRefused(
  sentToken: string | undefined,
  gatewayMessage: string,
  storage: TokenStorage = sessionStorage,
): void {
  if (sentToken !== undefined && storedToken(storage) === sentToken) storage.removeItem(TOKEN_KEY);
  if (authState.get().required) return;
  authState.set(
    sentToken === undefined
      ? { required: true, message: gatewayMessage, detail: '' }
      : { required: true, message: SESSION_ENDED_MESSAGE, detail: gatewayMessage },
  );
}
