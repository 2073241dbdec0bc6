// clawbot web chat: the token login, the chat over /chat/ws, the session list.
// Everything that came from the model or the gateway is inserted as text (textContent),
// never as markup. The token stays in this tab (sessionStorage) and travels only in the
// socket's first frame and in an Authorization header, never in a URL.
"use strict";

const TOKEN_KEY = "clawbot.token";
const CHAT_KEY = "clawbot.chat";
const CHAT_ID = /^[A-Za-z0-9_-]{1,64}$/;
const LABELS = { "allow-once": "Allow once", "allow-always": "Always allow", "deny": "Deny" };

const $ = (id) => document.getElementById(id);
let socket = null;
let open = null; // the reply bubble text is streaming into
let retry = 0;
let everReady = false;

function chatId() {
  let id = localStorage.getItem(CHAT_KEY) || "";
  if (!CHAT_ID.test(id)) {
    const bytes = crypto.getRandomValues(new Uint8Array(9));
    id = "web-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    localStorage.setItem(CHAT_KEY, id);
  }
  return id;
}

function showLogin(problem) {
  $("chat").hidden = true;
  $("login").hidden = false;
  $("login-error").hidden = !problem;
  $("login-error").textContent = problem || "";
  $("token").focus();
}

function showChat() {
  $("login").hidden = true;
  $("chat").hidden = false;
  $("text").focus();
}

function setStatus(text) {
  $("status").textContent = text;
}

function entry(kind, text) {
  const item = document.createElement("li");
  item.className = kind;
  const body = document.createElement("div");
  body.className = "text";
  body.textContent = text;
  item.appendChild(body);
  $("log").appendChild(item);
  item.scrollIntoView({ block: "end" });
  return item;
}

function closeReply() {
  if (open) open.classList.remove("streaming");
  open = null;
}

function send(text) {
  if (!socket || socket.readyState !== WebSocket.OPEN) {
    entry("error", "Not connected: the message was not sent.");
    return false;
  }
  socket.send(JSON.stringify({ type: "send", text }));
  return true;
}

function approvalButtons(item, offer) {
  const question = document.createElement("div");
  question.className = "question";
  question.textContent = offer.summary ? `Approve ${offer.summary}?` : `Approve ${offer.id}?`;
  item.appendChild(question);
  const row = document.createElement("div");
  row.className = "choices";
  for (const choice of offer.choices) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = `choice ${choice}`;
    button.dataset.choice = choice;
    button.textContent = LABELS[choice] || choice;
    button.addEventListener("click", () => {
      if (!send(`/approve ${offer.id} ${choice}`)) return;
      for (const other of row.querySelectorAll("button")) other.disabled = true;
      button.classList.add("chosen");
    });
    row.appendChild(button);
  }
  item.appendChild(row);
}

function onMessage(frame) {
  if (frame.notice) {
    closeReply();
    const item = entry("notice", frame.text);
    if (frame.approval) approvalButtons(item, frame.approval);
    item.scrollIntoView({ block: "end" });
  } else if (frame.streamed && open) {
    open.querySelector(".text").textContent = frame.text; // the same text, now whole
    closeReply();
  } else {
    closeReply();
    entry("reply", frame.text);
  }
}

const handlers = {
  // "ready" (the API's: the token was accepted) needs no answer; "welcome" says the chat is open
  welcome(frame) {
    everReady = true;
    retry = 0;
    setStatus("connected");
    setBusy(frame.busy);
    loadSessions();
  },
  delta(frame) {
    if (!open) open = entry("reply streaming", "");
    const body = open.querySelector(".text");
    body.textContent += frame.text;
    open.scrollIntoView({ block: "end" });
  },
  tool(frame) {
    closeReply();
    entry("tool", `\u2699 ${frame.name} ${frame.summary}`.trim());
  },
  message: onMessage,
  busy(frame) {
    setBusy(frame.busy);
    if (!frame.busy) loadSessions();
  },
  error(frame) {
    entry("error", frame.text);
  },
};

function setBusy(busy) {
  $("stop").hidden = !busy;
  setStatus(busy ? "clawbot is answering…" : "connected");
}

function connect() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (!token) return showLogin();
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(`${scheme}//${location.host}/chat/ws`);
  socket = ws;
  setStatus("connecting…");
  ws.addEventListener("open", () => {
    ws.send(JSON.stringify({ type: "auth", token }));
    ws.send(JSON.stringify({ type: "hello", chat: chatId() }));
  });
  ws.addEventListener("message", (event) => {
    let frame;
    try {
      frame = JSON.parse(event.data);
    } catch {
      return;
    }
    const handler = frame && handlers[frame.type];
    if (handler) handler(frame);
  });
  ws.addEventListener("close", (event) => {
    if (socket !== ws) return; // signed out, or replaced
    socket = null;
    closeReply();
    $("stop").hidden = true;
    if (event.code === 4401) {
      sessionStorage.removeItem(TOKEN_KEY);
      everReady = false;
      showLogin("That token was not accepted. Copy it again from the file ~/.clawbot/gateway/token.");
      return;
    }
    const wait = Math.min(30, 2 ** retry);
    retry += 1;
    setStatus(everReady ? `disconnected; reconnecting in ${wait} s…` : `cannot reach clawbot; retrying in ${wait} s…`);
    setTimeout(connect, wait * 1000);
  });
}

async function loadSessions() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const note = $("sessions-note");
  if (!token) return;
  try {
    const response = await fetch("/v1/sessions", { headers: { Authorization: `Bearer ${token}` } });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const data = await response.json();
    const sessions = Array.isArray(data) ? data : data.sessions || [];
    const list = $("sessions");
    list.replaceChildren();
    for (const session of sessions) {
      const item = document.createElement("li");
      const key = document.createElement("span");
      key.className = "key";
      key.textContent = session.key || session.session_key || String(session.id || "");
      item.appendChild(key);
      const when = session.updated_at || session.updated;
      if (when) {
        const time = document.createElement("span");
        time.className = "when";
        time.textContent = String(when);
        item.appendChild(time);
      }
      list.appendChild(item);
    }
    note.hidden = sessions.length > 0;
    note.textContent = sessions.length ? "" : "No sessions yet.";
  } catch (problem) {
    note.hidden = false;
    note.textContent = `The session list is not available (${problem.message}).`;
  }
}

function signOut() {
  sessionStorage.removeItem(TOKEN_KEY);
  const ws = socket;
  socket = null;
  everReady = false;
  if (ws) ws.close(1000, "signed out");
  $("log").replaceChildren();
  $("sessions").replaceChildren();
  showLogin();
}

function submitText(event) {
  event.preventDefault();
  const text = $("text").value;
  if (!text.trim()) return;
  if (send(text)) {
    closeReply();
    entry("user", text);
    $("text").value = "";
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const token = $("token").value.trim();
    if (!token) return;
    sessionStorage.setItem(TOKEN_KEY, token);
    $("token").value = "";
    showChat();
    connect();
  });
  $("composer").addEventListener("submit", submitText);
  $("text").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) submitText(event);
  });
  $("stop").addEventListener("click", () => send("/stop"));
  $("refresh-sessions").addEventListener("click", loadSessions);
  $("sign-out").addEventListener("click", signOut);
  if (sessionStorage.getItem(TOKEN_KEY)) {
    showChat();
    connect();
  } else {
    showLogin();
  }
});
