echo "[deps] java peers: none yet"
