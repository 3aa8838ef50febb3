# workerd configuration of the example worker (worker.ts, bundled to worker.js beside this file).
#
#   deno bundle --platform browser -o examples/edge/workerd/worker.js examples/edge/workerd/worker.ts
#   DUPLEX_RELAY_URL=ws://127.0.0.1:8787/v1 DUPLEX_RELAY_TOKEN=... \
#     npx workerd serve examples/edge/workerd/config.capnp
#
# `--socket-addr http=127.0.0.1:<port>` listens elsewhere. On Cloudflare, wrangler writes the
# equivalent of this file from wrangler.json (compatibility_date, compatibility_flags, the
# durable_objects binding, vars for the two variables); outbound connections there go to the
# public internet, so only the local network service below is workerd-specific.

using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    # workerd's implicit "internet" service reaches public addresses only (against SSRF). The
    # relay of this example runs on this machine, so the worker's outbound connections (its
    # WebSocket to the relay included) go through a network service that allows local ones.
    # For a relay on the internet, drop this and the globalOutbound line below.
    (name = "relay-network", network = (allow = ["local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:8080", http = (), service = "main")],
);

const worker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  # A date this workerd knows (a binary refuses dates after its own release); nothing here
  # depends on a date-gated behaviour. No nodejs_compat: the library needs Web APIs only.
  compatibilityDate = "2026-11-01",
  # request.signal aborts when the client disconnects only with this flag.
  compatibilityFlags = ["enable_request_signal"],
  globalOutbound = "relay-network",
  bindings = [
    (name = "DUPLEX_RELAY_URL", fromEnvironment = "DUPLEX_RELAY_URL"),
    (name = "DUPLEX_RELAY_TOKEN", fromEnvironment = "DUPLEX_RELAY_TOKEN"),
    (name = "CONVERSATIONS", durableObjectNamespace = "Conversation"),
  ],
  durableObjectNamespaces = [
    # workerd evicts an idle object after 10 s, and its session with it; keep it in memory.
    (className = "Conversation", uniqueKey = "duplex-claude-example-conversation",
     preventEviction = true),
  ],
  durableObjectStorage = (inMemory = void),
);
