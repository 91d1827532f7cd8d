#!/usr/bin/env bash
# A real S3-protocol server on 127.0.0.1 for npy-remote's live suite: moto's
# server from the project's venv (scripts/requirements.txt pins moto[server]).
#
#   scripts/s3-server.sh start   # start it, create a user with a key and the bucket
#   scripts/s3-server.sh env     # print the exports that point clients at it
#   scripts/s3-server.sh stop    # stop it (and forget its state)
#
# Authentication is on (moto's INITIAL_NO_AUTH_ACTION_COUNT): the first three
# requests create an IAM user, its access key and an allow-all policy; every
# later request must be signed with that key, so wrong credentials fail as on
# AWS. State (pid, log, credentials) lives in target/s3-server/.
# Fails (non-zero exit) when the server cannot start: CI never skips.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
state="$repo_root/target/s3-server"
port="${NPY_S3_PORT:-5055}"
bucket="npy-live"

start() {
    if [[ -f "$state/pid" ]] && kill -0 "$(cat "$state/pid")" 2>/dev/null; then
        echo "s3-server: already running (pid $(cat "$state/pid"))" >&2
        return 0
    fi
    local python
    python="$("$repo_root/scripts/setup-venv.sh")"
    mkdir -p "$state"
    INITIAL_NO_AUTH_ACTION_COUNT=3 setsid "$(dirname "$python")/moto_server" -H 127.0.0.1 -p "$port" \
        >"$state/log" 2>&1 </dev/null &
    echo $! >"$state/pid"
    local endpoint="http://127.0.0.1:$port"
    for _ in $(seq 100); do
        if "$python" -c "import urllib.request,sys; urllib.request.urlopen('$endpoint/moto-api/data.json')" 2>/dev/null; then
            break
        fi
        sleep 0.1
    done
    "$python" - "$endpoint" "$bucket" "$state/env" <<'PY'
import json, sys
import boto3

endpoint, bucket, env_file = sys.argv[1:]
anonymous = dict(endpoint_url=endpoint, region_name="us-east-1",
                 aws_access_key_id="bootstrap", aws_secret_access_key="bootstrap")
iam = boto3.client("iam", **anonymous)
iam.create_user(UserName="npy")
key = iam.create_access_key(UserName="npy")["AccessKey"]
iam.put_user_policy(UserName="npy", PolicyName="all", PolicyDocument=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}],
}))
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                  aws_access_key_id=key["AccessKeyId"],
                  aws_secret_access_key=key["SecretAccessKey"])
s3.create_bucket(Bucket=bucket)
with open(env_file, "w") as out:
    for name, value in [
        ("AWS_ACCESS_KEY_ID", key["AccessKeyId"]),
        ("AWS_SECRET_ACCESS_KEY", key["SecretAccessKey"]),
        ("AWS_REGION", "us-east-1"),
        ("AWS_DEFAULT_REGION", "us-east-1"),
        ("AWS_ENDPOINT", endpoint),
        ("AWS_ENDPOINT_URL", endpoint),
        ("AWS_ALLOW_HTTP", "true"),
        ("NPY_S3_BUCKET", bucket),
    ]:
        out.write(f"export {name}={value}\n")
PY
    echo "s3-server: moto on $endpoint (pid $(cat "$state/pid")), bucket $bucket" >&2
}

stop() {
    if [[ -f "$state/pid" ]]; then
        local pid
        pid="$(cat "$state/pid")"
        # setsid made the server a process-group leader: stop it and its children.
        kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
        rm -f "$state/pid" "$state/env"
        echo "s3-server: stopped" >&2
    fi
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    env) cat "$state/env" ;;
    *)
        echo "usage: $0 start|env|stop" >&2
        exit 2
        ;;
esac
