# Shared by the deploy scripts: where the brick is and how to reach it.
# EV3_HOST: ssh destination (default robot@ev3dev.local)
# EV3_DIR:  directory on the brick for the binaries (default ev3sysfs, in $HOME)
EV3_HOST=${EV3_HOST:-robot@ev3dev.local}
EV3_DIR=${EV3_DIR:-ev3sysfs}
SSH_OPTS=(-o BatchMode=yes -o ConnectTimeout=${EV3_CONNECT_TIMEOUT:-5})

die() {
    echo "deploy: $*" >&2
    exit 2
}

# Fails with a clear message when the brick cannot be reached.
check_brick() {
    command -v ssh >/dev/null || die "ssh is not installed (apt-get install openssh-client)"
    if ! out=$(ssh "${SSH_OPTS[@]}" "$EV3_HOST" true 2>&1); then
        die "cannot reach the brick at $EV3_HOST: ${out:-no answer}
  - is it on and connected (USB, Bluetooth or Wi-Fi), and does 'ping ${EV3_HOST#*@}' answer?
  - set EV3_HOST=robot@<address> if it has another name or address
  - first time? see deploy/README.md (ssh key for password-less login)"
    fi
}

# Copies files to $EV3_DIR on the brick.
push() {
    ssh "${SSH_OPTS[@]}" "$EV3_HOST" "mkdir -p '$EV3_DIR'" || die "cannot create $EV3_DIR on $EV3_HOST"
    scp -q -o BatchMode=yes "$@" "$EV3_HOST:$EV3_DIR/" || die "copying to $EV3_HOST:$EV3_DIR failed"
}
