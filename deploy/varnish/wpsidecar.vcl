vcl 4.1;
# Varnish in front of wpsidecar (Varnish 7, varnish-modules for xkey).
#
# Public routes (--public-routes) are cached for the s-maxage they say and
# purged the moment their data changes: run the sidecar with
# --purge-varnish http://<this varnish>, and it sends
#   PURGE /   xkey-purge: <tags>        (or xkey-softpurge, --purge-varnish-soft)
#   PURGE <public route path>           (with the site's Host)
# Everything with credentials, cookies or private answers passes through
# uncached: Varnish's built-in rules do that, and the sidecar's own routes
# answer "private, no-store".
#
# Change the backend to where the sidecar listens, and the ACL to where
# its purges come from.

import xkey;

backend sidecar {
    .host = "sidecar";
    .port = "8080";
}

acl purgers {
    "localhost";
    "127.0.0.1";
    "::1";
    "sidecar";
}

sub vcl_recv {
    if (req.method == "PURGE") {
        if (client.ip !~ purgers) {
            return (synth(405, "Not allowed"));
        }
        if (req.http.xkey-purge) {
            set req.http.n-gone = xkey.purge(req.http.xkey-purge);
            return (synth(200, "Purged " + req.http.n-gone));
        }
        if (req.http.xkey-softpurge) {
            set req.http.n-gone = xkey.softpurge(req.http.xkey-softpurge);
            return (synth(200, "Soft-purged " + req.http.n-gone));
        }
        return (purge);
    }
    # No return: Varnish's built-in rules pass what carries Authorization
    # or a Cookie, and every method but GET and HEAD.
}

sub vcl_backend_response {
    # xkey indexes an object by the space-separated tags of its xkey header.
    if (beresp.http.Surrogate-Key) {
        set beresp.http.xkey = beresp.http.Surrogate-Key;
    }
}

sub vcl_deliver {
    if (obj.hits > 0) {
        set resp.http.X-Cache = "HIT";
    } else {
        set resp.http.X-Cache = "MISS";
    }
    unset resp.http.xkey;
}
