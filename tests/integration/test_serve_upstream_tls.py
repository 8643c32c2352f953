"""`thaw serve --upstream` in front of a broker that speaks TLS (issue 21's
`-X security.protocol=SSL`, issue 22's "TLS on both legs"): a single-node
broker with an SSL listener (scripts/kafka.sh, THAW_KAFKA_SSL_KEYSTORE, a PEM
keystore made by the openssl CLI), Thaw reaching it with
`-X security.protocol=SSL -X ssl.ca.location=CA`, host names verified.
"""

from __future__ import annotations

import subprocess
import time

import pytest

from kafka_broker import KafkaBroker
from serve_harness import kcat_cmd
from tls_certs import make_certs
from upstream_harness import Tiered, diff


@pytest.fixture(scope="module")
def ssl_broker(tmp_path_factory):
    d = tmp_path_factory.mktemp("kafka-ssl")
    certs = make_certs(d / "certs")
    keystore = certs / "keystore.pem"
    keystore.write_bytes((certs / "server.key").read_bytes() + (certs / "server.pem").read_bytes())
    broker = KafkaBroker.start(str(d / "kafka"), env_extra={"THAW_KAFKA_SSL_KEYSTORE": str(keystore)})
    try:
        assert broker.ssl_bootstrap, "scripts/kafka.sh opened no SSL listener"
        yield broker, certs
    finally:
        broker.stop()


def test_an_upstream_over_tls_with_its_ca(thaw_bin, ssl_broker, tmp_path):
    broker, certs = ssl_broker
    t = Tiered(thaw_bin, broker, tmp_path, partitions=2, truncate="delete_records")
    try:
        boot = t.start_another("-X", "security.protocol=SSL", "-X", f"ssl.ca.location={certs / 'ca.pem'}",
                               upstream=broker.ssl_bootstrap)
        got = t.consume(kcat_cmd("-b", boot, "-t", t.topic, "--start", "beginning"))
        expected = t.expected()
        assert got == expected, diff(expected, got)
        log = t.log_of(boot)
        # The brokers Thaw learnt are the SSL listener's.
        assert f"({broker.ssl_bootstrap}) is reachable through" in log, log[-3000:]

        # A CA that did not sign the broker's certificate: nothing is read,
        # and Thaw says why (the certificate did not verify).
        other = make_certs(tmp_path / "other-ca")
        bad = t.start_another("-X", "security.protocol=SSL", "-X", f"ssl.ca.location={other / 'ca.pem'}",
                              upstream=broker.ssl_bootstrap)
        p = subprocess.run(kcat_cmd("-b", bad, "-t", t.topic, "--start", "beginning", "--timeout", "15"),
                           capture_output=True, text=True, timeout=60)
        assert p.returncode != 0
        deadline = time.monotonic() + 10
        while "certificate verify failed" not in t.log_of(bad):
            assert time.monotonic() < deadline, t.log_of(bad)[-3000:]
            time.sleep(0.2)
    finally:
        t.stop()
