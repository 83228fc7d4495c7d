"""Sign-in: who is using the app, decided by the shell before anything else is drawn.

With an `[auth]` section in `.streamlit/secrets.toml` the app uses Streamlit's `st.login` (OpenID Connect:
Entra ID, Google Workspace, Okta, Keycloak, ...): until a person has signed in, the only page is the sign-in
page; afterwards `st.user`'s claims become a `Person` (core/people.py), admins being the emails listed in
`[katachi] admins`. Without `[auth]` the app runs as one local person, 「ローカル利用者」, and says so.

The person lives in the data key `app_person` (never bound to a widget, so a browser cannot set it) and is
recomputed from `st.user` on every run of the shell. When the person of a session changes, everything
personal kept in the session (conversations, debug log, page state) is dropped first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from core.people import LOCAL_PERSON, Person, admin_emails, person_from_claims
from pages.ui.shell import state
from pages.ui.shell.render import plain_label
from pages.ui.shell.state import PERSON_KEY

# Session keys that are not personal: the provider settings (and a client tests pin), the sidebar toggles.
RECORDED_KEY = "auth_recorded_person"
KEEP_PREFIXES = ("app_settings", "app_debug", "app_fault_pct", "llm_client", "sidebar_")


def _secrets() -> Mapping[str, Any]:
    try:
        return {k: st.secrets[k] for k in st.secrets}
    except Exception:  # noqa: BLE001 - Streamlit raises several types when no secrets file exists
        return {}


def auth_section() -> Mapping[str, Any] | None:
    """The `[auth]` section of the secrets, or None when sign-in is not configured."""
    section = _secrets().get("auth")
    return section if isinstance(section, Mapping) and section else None


def auth_configured() -> bool:
    return auth_section() is not None


def providers(section: Mapping[str, Any]) -> list[str | None]:
    """The providers to offer: None for the default one (client_id in `[auth]` itself), then every named
    `[auth.<name>]` section."""
    named: list[str | None] = [k for k, v in section.items() if isinstance(v, Mapping) and v.get("client_id")]
    return ([None] if section.get("client_id") else []) + named


def admins() -> frozenset[str]:
    """The emails in `[katachi] admins`."""
    katachi = _secrets().get("katachi")
    return admin_emails(katachi.get("admins") if isinstance(katachi, Mapping) else None)


def _adopt(person: Person) -> None:
    """Make `person` the session's person; a different person than before starts from a clean session."""
    ss = st.session_state
    before = ss.get(PERSON_KEY)
    if isinstance(before, Person) and before.id != person.id:
        for key in list(ss.keys()):
            if not str(key).startswith(KEEP_PREFIXES):
                del ss[key]
    if not isinstance(before, Person) or before != person:
        ss[PERSON_KEY] = person


def sign_in_page() -> None:
    """The one page shown before sign-in: what the app is and a sign-in button per provider."""
    st.title("Katachi（形）")
    st.write("社内向けの分析アプリです。利用するにはサインインしてください。")
    st.caption(
        "会話・聞き取り・記憶・診断の記録は、サインインした本人だけが見られます。ナレッジベースはチームで共有します。"
    )
    section = auth_section() or {}
    for name in providers(section) or [None]:
        label = "サインイン" if name is None else f"{plain_label(name)} でサインイン"
        if st.button(label, key=f"auth_login_{name or 'default'}", type="primary", icon=":material/login:"):
            if name is None:
                st.login()
            else:
                st.login(name)


def _unknown_identity() -> None:
    st.title("Katachi（形）")
    st.error(
        "サインインしたアカウントから利用者を特定できませんでした（ID トークンに sub も email もありません）。"
        "管理者に連絡してください。"
    )
    if st.button("ログアウト", key="auth_logout_unknown", icon=":material/logout:"):
        st.logout()


def sign_in() -> Person | None:
    """Decide the session's person (the shell calls this before anything else).

    Without `[auth]`: the local person. With it: None while nobody is signed in (the caller shows only
    `sign_in_page`), else the signed-in person; a person whose claims name nobody is told so and stopped.
    """
    if not auth_configured():
        _adopt(LOCAL_PERSON)
        return LOCAL_PERSON
    if not st.user.is_logged_in:
        return None
    person = person_from_claims(st.user.to_dict(), admins())
    if person is None:
        _unknown_identity()
        st.stop()
    _adopt(person)
    return person


def record(person: Person) -> None:
    """Once per session (after init_session): keep a signed-in person's name and email for team views."""
    if person.is_local or st.session_state.get(RECORDED_KEY) == person:
        return
    from core.flows.roster import remember_person  # noqa: PLC0415 - SQLAlchemy: only for a signed-in person

    remember_person(state.engine(), person)
    st.session_state[RECORDED_KEY] = person


def render_identity(person: Person) -> None:
    """In the sidebar: who is signed in and 「ログアウト」, or that the app runs as the local person."""
    with st.sidebar:
        if person.is_local:
            st.caption(
                f":material/person: {plain_label(person.name)}（サインインなしで動作中）。"
                "記録はこのサーバーの利用者全員で1人分として扱われます。"
            )
            return
        st.markdown(f":material/account_circle: **{plain_label(person.name)}**")
        if person.email and person.email != person.name:
            st.caption(plain_label(person.email) + ("（管理者）" if person.is_admin else ""))
        elif person.is_admin:
            st.caption("管理者")
        if st.button("ログアウト", key="auth_logout", icon=":material/logout:"):
            st.logout()


def recorded_as(role: str, person: Person) -> str:
    """「保存者: …」 under a save button, saying the same as the sidebar: the signed-in person, or the local
    person every user of this server shares when nobody signs in."""
    if person.is_local:
        return (
            f"{role}: {plain_label(person.name)}（サインインなしで動作中のため、このサーバーの利用者全員の"
            "共有の記録になります）"
        )
    return f"{role}: {plain_label(person.name)}（サインイン中の利用者として記録されます）"
