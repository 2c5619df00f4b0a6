#!/bin/sh
# The OAuth device-flow test servers, end to end with curl: for each server, device authorization -> a poll after
# the interval (authorization_pending) -> an early poll (what the server says to a client that polls too soon) ->
# a person's approval through the server's own pages (approve.py) -> the token -> the device code used again ->
# userinfo -> introspection -> refresh (rotation: the old refresh token is refused) -> revocation -> introspection
# (inactive) and a refresh with the revoked grant; then a denial; then the confidential client: device
# authorization with client_secret_post, its token with client_secret_basic, a refresh with client_secret_post, and
# a device authorization with client_secret_basic and one with a wrong secret. django-oauth-toolkit runs twice: over http and over https through nginx.
# What each server is expected to answer where they differ is below, one line per server; README.md says more.
# Exits nonzero on the first answer that differs, naming it.
#   sh Tests/oauth-servers/check.sh [dot|authlib|dot-tls|authlib-tls ...]   (default: dot authlib dot-tls)
set -eu
export PYTHONDONTWRITEBYTECODE=1 # leave no __pycache__ in the source tree
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../test-venv.sh"
runs=${*:-dot authlib dot-tls}
work=$(mktemp -d)
launcher=""
stop_launcher() {
    if [ -n "$launcher" ]; then
        kill "$launcher" 2>/dev/null || true
        wait "$launcher" 2>/dev/null || true
        launcher=""
    fi
}
trap 'stop_launcher; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

fail() {
    echo "check.sh [$run]: $*" >&2
    [ -s "$work/log" ] && { echo "--- the server's last log lines:" >&2; tail -n 15 "$work/log" >&2; }
    exit 1
}
# field FILE NAME: a top-level field of a JSON file, empty when absent.
field() { "$python" -c 'import json,sys; v=json.load(open(sys.argv[1])).get(sys.argv[2]); print("" if v is None else v if isinstance(v, str) else json.dumps(v))' "$1" "$2"; }
# call NAME CURL-ARGS...: one request (10 s at most); its status in $status, its body in $work/NAME.
call() {
    name=$1
    shift
    status=$(curl -sS --max-time 10 $cacert -o "$work/$name" -w '%{http_code}' "$@") || fail "$name: curl failed"
}
# expect NAME STATUS [FIELD VALUE]...: the last call answered STATUS, with each FIELD equal to VALUE ("*": present).
expect() {
    name=$1 want=$2
    shift 2
    [ "$status" = "$want" ] || fail "$name: HTTP $status, expected $want: $(head -c 300 "$work/$name")"
    while [ $# -ge 2 ]; do
        got=$(field "$work/$name" "$1") || fail "$name: not JSON: $(head -c 300 "$work/$name")"
        if [ "$2" = "*" ]; then
            [ -n "$got" ] || fail "$name: no $1 in $(head -c 300 "$work/$name")"
        else
            [ "$got" = "$2" ] || fail "$name: $1 is '$got', expected '$2'"
        fi
        shift 2
    done
    echo "  ok $name: $want"
}

G=urn:ietf:params:oauth:grant-type:device_code
for run in $runs; do
    server=${run%-tls}
    tls=""
    [ "$run" != "$server" ] && tls=--tls
    # Where the servers differ (measured; README.md): the answer to a poll sooner than the interval, to a second
    # token request with a device code already exchanged, and to a confidential client's device authorization
    # with HTTP Basic credentials.
    case $server in
        dot) early=authorization_pending reuse_status=200 basic_status=400 ;;
        authlib) early=slow_down reuse_status=400 basic_status=200 ;;
        *) echo "check.sh: unknown server $run (dot, authlib, dot-tls, authlib-tls)" >&2; exit 2 ;;
    esac
    echo "check.sh: $run"
    rm -f "$work/line"
    sh "$here/launch.sh" --server "$server" $tls --interval 2 >"$work/line" 2>"$work/log" &
    launcher=$!
    i=0
    # Until the launcher's line is there whole (it ends with a newline).
    while [ ! -s "$work/line" ] || [ -n "$(tail -c 1 "$work/line")" ]; do
        kill -0 "$launcher" 2>/dev/null || fail "the launcher stopped before its server answered"
        i=$((i + 1))
        [ $i -le 600 ] || fail "no line from the launcher within 5 minutes"
        sleep 0.5
    done
    line=$work/line
    base=$(field "$line" base)
    cacert=""
    ca=$(field "$line" ca_file)
    [ -n "$ca" ] && cacert="--cacert $ca"
    client=$(field "$line" client_id)
    box=$(field "$line" confidential_client_id)
    secret=$(field "$line" client_secret)
    user=$(field "$line" user)
    password=$(field "$line" password)
    interval=$(field "$line" interval)
    token_url=$(field "$line" token_endpoint)
    device_url=$(field "$line" device_authorization_endpoint)

    call metadata "$base/.well-known/oauth-authorization-server"
    expect metadata 200 issuer "*" token_endpoint "$token_url"

    call authorize -X POST "$device_url" -d client_id="$client" --data-urlencode "scope=openid read"
    expect authorize 200 device_code "*" user_code "*" verification_uri "*" expires_in "*" interval "$interval"
    device_code=$(field "$work/authorize" device_code)
    user_code=$(field "$work/authorize" user_code)

    sleep $((interval + 1))
    call poll -X POST "$token_url" -d grant_type=$G -d device_code="$device_code" -d client_id="$client"
    expect poll 400 error authorization_pending
    call early-poll -X POST "$token_url" -d grant_type=$G -d device_code="$device_code" -d client_id="$client"
    expect early-poll 400 error "$early"

    "$python" "$here/approve.py" --base "$base" --user-code "$user_code" --user "$user" --password "$password" \
        ${ca:+--cacert "$ca"} >"$work/approve" 2>&1 || fail "approve.py: $(cat "$work/approve")"
    echo "  ok approve.py: $(cat "$work/approve")"

    call token -X POST "$token_url" -d grant_type=$G -d device_code="$device_code" -d client_id="$client"
    expect token 200 access_token "*" refresh_token "*" token_type Bearer expires_in "*" scope "openid read"
    access=$(field "$work/token" access_token)
    refresh=$(field "$work/token" refresh_token)
    call reuse -X POST "$token_url" -d grant_type=$G -d device_code="$device_code" -d client_id="$client"
    expect reuse "$reuse_status"

    call userinfo "$(field "$line" userinfo_endpoint)" -H "Authorization: Bearer $access"
    expect userinfo 200 sub "*"
    introspect=$(field "$line" introspection_endpoint)
    call introspect "$introspect" -u "$box:$secret" -d token="$access"
    expect introspect 200 active true client_id "$client" username "$user"

    call refresh -X POST "$token_url" -d grant_type=refresh_token -d refresh_token="$refresh" -d client_id="$client"
    expect refresh 200 access_token "*" refresh_token "*"
    new_access=$(field "$work/refresh" access_token)
    new_refresh=$(field "$work/refresh" refresh_token)
    [ "$new_refresh" != "$refresh" ] || fail "refresh: the refresh token was not rotated"
    call old-refresh -X POST "$token_url" -d grant_type=refresh_token -d refresh_token="$refresh" -d client_id="$client"
    expect old-refresh 400 error invalid_grant
    call old-access "$introspect" -u "$box:$secret" -d token="$access"
    expect old-access 200 active false

    call revoke -X POST "$(field "$line" revocation_endpoint)" -d client_id="$client" -d token="$new_access"
    [ "$status" = 200 ] || fail "revoke: HTTP $status: $(head -c 300 "$work/revoke")"
    echo "  ok revoke: 200"
    call revoked "$introspect" -u "$box:$secret" -d token="$new_access"
    expect revoked 200 active false
    call refresh-revoked -X POST "$token_url" -d grant_type=refresh_token -d refresh_token="$new_refresh" -d client_id="$client"
    expect refresh-revoked 400 error invalid_grant

    call deny-authorize -X POST "$device_url" -d client_id="$client" -d scope=read
    expect deny-authorize 200 device_code "*"
    "$python" "$here/approve.py" --base "$base" --user-code "$(field "$work/deny-authorize" user_code)" \
        --user "$user" --password "$password" --deny ${ca:+--cacert "$ca"} >"$work/approve" 2>&1 ||
        fail "approve.py --deny: $(cat "$work/approve")"
    echo "  ok approve.py --deny: $(cat "$work/approve")"
    call denied -X POST "$token_url" -d grant_type=$G -d device_code="$(field "$work/deny-authorize" device_code)" \
        -d client_id="$client"
    expect denied 400 error access_denied

    call box-post -X POST "$device_url" -d client_id="$box" -d client_secret="$secret" -d scope=read
    expect box-post 200 device_code "*"
    "$python" "$here/approve.py" --base "$base" --user-code "$(field "$work/box-post" user_code)" \
        --user "$user" --password "$password" ${ca:+--cacert "$ca"} >"$work/approve" 2>&1 ||
        fail "approve.py (confidential client): $(cat "$work/approve")"
    call box-token -X POST "$token_url" -u "$box:$secret" -d grant_type=$G -d device_code="$(field "$work/box-post" device_code)"
    expect box-token 200 access_token "*" refresh_token "*"
    call box-refresh -X POST "$token_url" -d client_id="$box" -d client_secret="$secret" -d grant_type=refresh_token \
        -d refresh_token="$(field "$work/box-token" refresh_token)"
    expect box-refresh 200 access_token "*"
    call box-basic -X POST "$device_url" -u "$box:$secret" -d scope=read
    expect box-basic "$basic_status"
    call box-wrong -X POST "$device_url" -d client_id="$box" -d client_secret=wrong -d scope=read
    expect box-wrong 401 error invalid_client

    stop_launcher
done
echo "check.sh: passed ($runs)"
