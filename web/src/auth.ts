/**
 * The dashboard's credentials: a Kubernetes bearer token, kept in this tab's session storage (gone when
 * the tab closes, never in a cookie, so no other site can make the browser send it). It arrives in a
 * login link's fragment (`/#token=…`, which never reaches a server and is removed from the address bar
 * and history at once) or from the sign-in form shown when the gateway answers 401.
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

/** The Authorization header for the gateway: nothing without a token (a gateway on --anonymous-user-port). */
export function authHeaders(storage: TokenStorage = sessionStorage): Record<string, string> {
  const token = storedToken(storage);
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** Whether the gateway refused the credentials (401): the page then asks for a token. */
export const authState = new Store<{ required: boolean; message: string }>({ required: false, message: '' });

export function noteUnauthenticated(message: string): void {
  if (!authState.get().required) authState.set({ required: true, message });
}
