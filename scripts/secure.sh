# Sourced by scripts/hbase.sh for `start --secure`: a real MIT Kerberos KDC for a realm of
# its own on loopback, a CA and a server certificate made with the JDK's keytool, and
# HBase's Thrift servers Kerberized in front of the same standalone HBase:
#
#   thrift1  SASL/GSSAPI, qop auth        TALLROW_HBASE_SASL1_AUTH
#   thrift1  SASL/GSSAPI, qop auth-conf   TALLROW_HBASE_SASL1_CONF
#   thrift2  SASL/GSSAPI, qop auth-int    TALLROW_HBASE_SASL2_INT
#   thrift2  HTTP + SPNEGO + TLS          TALLROW_HBASE_HTTPS2
#
#   native   Kerberos on HBase's RPC, qop auth-int and auth-conf offered   TALLROW_HBASE_NATIVE_KRB
#   native   the same, inside TLS                                           TALLROW_HBASE_NATIVE_KRB_TLS
#   native   a second such cluster whose ZooKeeper requires SASL            TALLROW_HBASE_NATIVE_KRB_ZK_SASL
#
# Each variable holds the endpoint's full hbase:// URL. The native one is a cluster of its
# own: a standalone HBase (master, region server and ZooKeeper in one JVM, on the local
# file system) whose RPC requires Kerberos (hbase.security.authentication=kerberos,
# hbase.rpc.protection=integrity,privacy), so that a client meets what a secured cluster's
# master and region servers ask, and a plain client is refused. Its RPC also takes TLS
# (hbase.server.netty.tls.enabled, with plain connections still served beside it and no
# client certificate asked for), with the certificate below, and HBase's AES in place of
# GSSAPI's privacy wrap for the clients that ask (hbase.rpc.crypto.encryption.aes.enabled).
# Its ZooKeeper is secured as HBase secures its own (SASL logins for the server and for
# HBase's client, HBase's ACLs on the znodes) but still serves anonymous sessions, which is
# how clients read a secured cluster's meta location; the second cluster's refuses them
# (zookeeper.enforce.auth.enabled), for the clusters that require SASL of every client.
# The Thrift servers require
# Kerberos: their own calls into the standalone HBase behind them fall back to simple
# authentication (hbase.ipc.client.fallback-to-simple-auth-allowed), as a Kerberized
# gateway in front of an unsecured cluster would. What a Thrift client meets (SASL on the
# socket, SPNEGO over HTTP, the server principal, the QOP, TLS) is exactly a secured
# cluster's; the gateway-to-region-server hop is not part of it, and the plain servers
# keep serving the rest of the suite from the same HBase.
#
# The client side, also in .hbase.env: KRB5_CONFIG (the realm's krb5.conf), KRB5CCNAME
# (a ticket cache holding a valid ticket for client@TALLROW.TEST, from its keytab),
# TALLROW_KRB5_CLIENT_KEYTAB, TALLROW_HBASE_CA (the CA's PEM), TALLROW_HBASE_OTHER_CA (a
# CA that signed nothing here, for the error tests).

realm=TALLROW.TEST

# The KDC's and kadmin's programs, installed from Debian's packages when missing.
kerberos_tools() {
  local need=()
  command -v krb5kdc >/dev/null 2>&1 || [ -x /usr/sbin/krb5kdc ] || need+=(krb5-kdc krb5-admin-server)
  command -v kinit >/dev/null 2>&1 || need+=(krb5-user)
  [ ${#need[@]} -eq 0 ] && return 0
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo -n)
  echo "installing ${need[*]} from Debian's packages" >&2
  if ! { "${sudo[@]}" apt-get update -q && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q \
    --no-install-recommends "${need[@]}"; } >"$1/apt.log" 2>&1; then
    echo "no Kerberos KDC on this machine: apt-get install ${need[*]} failed (see $1/apt.log)" >&2
    return 1
  fi
}

krb5_conf() { # dir port
  cat <<EOF
[libdefaults]
  default_realm = $realm
  dns_lookup_kdc = false
  dns_lookup_realm = false
  dns_canonicalize_hostname = false
  rdns = false
  udp_preference_limit = 1
  ticket_lifetime = 10h
  renew_lifetime = 7d
[realms]
  $realm = {
    kdc = 127.0.0.1:$2
  }
[domain_realm]
  localhost = $realm
EOF
}

kdc_conf() { # dir port
  cat <<EOF
[kdcdefaults]
  kdc_listen = 127.0.0.1:$2
  kdc_tcp_listen = 127.0.0.1:$2
[realms]
  $realm = {
    database_name = $1/principal
    key_stash_file = $1/stash
    acl_file = $1/kadm5.acl
    max_life = 10h
    max_renewable_life = 7d
    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
  }
[logging]
  kdc = FILE:$1/kdc.log
EOF
}

# Starts the KDC under DIR/krb5 and fills the client's ticket cache; prints its pid.
start_kdc() { # dir
  local k="$1/krb5" port
  mkdir -p "$k"
  port="$(free_port)"
  krb5_conf "$k" "$port" >"$k/krb5.conf"
  kdc_conf "$k" "$port" >"$k/kdc.conf"
  : >"$k/kadm5.acl"
  export KRB5_CONFIG="$k/krb5.conf" KRB5_KDC_PROFILE="$k/kdc.conf" KRB5CCNAME="FILE:$k/client.ccache"
  kdb5_util create -s -r "$realm" -P "$(head -c 18 /dev/urandom | base64)" >"$k/kdb5_util.log" 2>&1 || {
    echo "kdb5_util could not create the realm's database (see $k/kdb5_util.log)" >&2
    return 2
  }
  local p
  for p in hbase/localhost HTTP/localhost zookeeper/localhost client; do
    kadmin.local -r "$realm" -q "addprinc -randkey $p" >>"$k/kadmin.log" 2>&1
  done
  kadmin.local -r "$realm" -q "ktadd -k $k/hbase.keytab hbase/localhost HTTP/localhost zookeeper/localhost" >>"$k/kadmin.log" 2>&1
  kadmin.local -r "$realm" -q "ktadd -k $k/client.keytab client" >>"$k/kadmin.log" 2>&1
  /usr/sbin/krb5kdc -n -r "$realm" >"$k/krb5kdc.out" 2>&1 &
  echo $! >"$k/krb5kdc.pid"
  local i
  for i in $(seq 1 50); do
    if kinit -k -t "$k/client.keytab" client 2>/dev/null; then
      return 0
    fi
    sleep 0.2
  done
  echo "the KDC did not answer on 127.0.0.1:$port (see $k/kdc.log and $k/krb5kdc.out)" >&2
  return 2
}

# A CA, a server certificate for localhost and 127.0.0.1 signed by it in a PKCS12 keystore
# for Jetty, one for localhost alone for HBase's RPC, the CA as PEM for clients, and a
# second CA that signed nothing.
make_certificates() { # dir
  local t="$1/tls" pass=tallrow-test
  mkdir -p "$t"
  local kt=(keytool -storetype PKCS12 -storepass "$pass" -keyalg RSA -keysize 2048 -validity 3650)
  {
    "${kt[@]}" -genkeypair -alias ca -dname "CN=tallrow test CA" -ext bc:c -keystore "$t/ca.p12"
    keytool -exportcert -rfc -alias ca -keystore "$t/ca.p12" -storepass "$pass" >"$t/ca.pem"
    "${kt[@]}" -genkeypair -alias other -dname "CN=tallrow other CA" -ext bc:c -keystore "$t/other.p12"
    keytool -exportcert -rfc -alias other -keystore "$t/other.p12" -storepass "$pass" >"$t/other-ca.pem"
    "${kt[@]}" -genkeypair -alias server -dname "CN=localhost" -keystore "$t/server.p12"
    keytool -certreq -alias server -keystore "$t/server.p12" -storepass "$pass" |
      keytool -gencert -alias ca -keystore "$t/ca.p12" -storepass "$pass" -rfc -validity 3650 \
        -ext san=dns:localhost,ip:127.0.0.1 -ext ku:c=digitalSignature,keyEncipherment -ext eku=serverAuth \
        >"$t/server.pem"
    keytool -importcert -noprompt -alias ca -file "$t/ca.pem" -keystore "$t/server.p12" -storepass "$pass"
    keytool -importcert -noprompt -alias server -file "$t/server.pem" -keystore "$t/server.p12" -storepass "$pass"
    # HBase's RPC: a certificate for localhost alone, so that a client reaching it by its
    # address meets a name check that fails.
    "${kt[@]}" -genkeypair -alias rpc -dname "CN=localhost" -keystore "$t/rpc.p12"
    keytool -certreq -alias rpc -keystore "$t/rpc.p12" -storepass "$pass" |
      keytool -gencert -alias ca -keystore "$t/ca.p12" -storepass "$pass" -rfc -validity 3650 \
        -ext san=dns:localhost -ext ku:c=digitalSignature,keyEncipherment -ext eku=serverAuth >"$t/rpc.pem"
    keytool -importcert -noprompt -alias ca -file "$t/ca.pem" -keystore "$t/rpc.p12" -storepass "$pass"
    keytool -importcert -noprompt -alias rpc -file "$t/rpc.pem" -keystore "$t/rpc.p12" -storepass "$pass"
  } >"$t/keytool.log" 2>&1 || {
    echo "keytool could not make the test certificates (see $t/keytool.log)" >&2
    return 2
  }
}

# Fills configuration directory CONF with the logging of DIR's and a core-site.xml that
# turns on Kerberos for Hadoop's client code.
kerberized_conf_dir() { # dir conf
  mkdir -p "$2"
  cp "$1/conf/log4j2.properties" "$2/"
  cat >"$2/core-site.xml" <<EOF
<?xml version="1.0"?>
<configuration>
  <property><name>hadoop.security.authentication</name><value>kerberos</value></property>
</configuration>
EOF
}

# A configuration directory for one secured Thrift server: the plain site plus Kerberos,
# with EXTRA properties (name=value ...).
secure_conf() { # dir name extra...
  local dir="$1" name="$2" c="$1/conf-$2"
  shift 2
  kerberized_conf_dir "$dir" "$c"
  {
    sed '/<\/configuration>/d' "$dir/conf/hbase-site.xml"
    local kv
    for kv in \
      hbase.security.authentication=kerberos \
      hadoop.security.authentication=kerberos \
      hbase.ipc.client.fallback-to-simple-auth-allowed=true \
      "hbase.master.kerberos.principal=hbase/localhost@$realm" \
      "hbase.regionserver.kerberos.principal=hbase/localhost@$realm" \
      "hbase.thrift.kerberos.principal=hbase/localhost@$realm" \
      "hbase.thrift.keytab.file=$dir/krb5/hbase.keytab" \
      "hbase.thrift.spnego.principal=HTTP/localhost@$realm" \
      "hbase.thrift.spnego.keytab.file=$dir/krb5/hbase.keytab" \
      "$@"; do
      echo "  <property><name>${kv%%=*}</name><value>${kv#*=}</value></property>"
    done
    echo "</configuration>"
  } >"$c/hbase-site.xml"
  echo "$c"
}

# A standalone HBase whose RPC requires Kerberos, under DIR/NAME (logging to NAME.log), with
# EXTRA properties (name=value ...) after the others, and EXTRA JVM flags (-Dname=value);
# prints its pid, its ZooKeeper port and its master's port. Its master and region server
# log in as hbase/localhost from the realm's keytab; its region server's info server (a free
# loopback port) asks for SPNEGO as HTTP/localhost. Its ZooKeeper is secured as HBase
# secures its own: the server logs in as zookeeper/localhost and takes SASL, HBase's
# client authenticates to it, and the znodes get HBase's ACLs (the ones clients read
# world-readable); a -Dzookeeper.enforce.auth.enabled=true flag makes it refuse anonymous
# sessions.
start_kerberized_hbase() { # dir classpath name extra...
  local dir="$1" cp="$2" k="$1/$3" zk m rs
  shift 3
  local props=() flags=() a
  for a in "$@"; do
    case "$a" in
      -D*) flags+=("$a") ;;
      *) props+=("$a") ;;
    esac
  done
  mkdir -p "$k/conf"
  zk="$(free_port)" m="$(free_port)" rs="$(free_port)"
  kerberized_conf_dir "$dir" "$k/conf"
  # On a Kerberized HDFS: its client settings (KRB_HDFS_CONF), hbase.rootdir in EXTRA.
  if [ -n "${KRB_HDFS_CONF:-}" ]; then cp "$KRB_HDFS_CONF"/core-site.xml "$KRB_HDFS_CONF"/hdfs-site.xml "$k/conf/"; fi
  {
    echo '<?xml version="1.0"?>'
    echo '<configuration>'
    local kv
    for kv in \
      hbase.cluster.distributed=false \
      "hbase.rootdir=file://$k/root" \
      "hbase.tmp.dir=$k/tmp" \
      hbase.wal.provider=filesystem \
      hbase.unsafe.stream.capability.enforce=false \
      hbase.zookeeper.quorum=127.0.0.1 \
      "hbase.zookeeper.property.clientPort=$zk" \
      "hbase.zookeeper.property.dataDir=$k/zookeeper" \
      "hbase.master.port=$m" \
      "hbase.regionserver.port=$rs" \
      hbase.master.hostname=localhost \
      hbase.unsafe.regionserver.hostname=localhost \
      hbase.master.info.port=-1 \
      hbase.regionserver.info.port=0 \
      hbase.regionserver.info.bindAddress=127.0.0.1 \
      hbase.security.authentication.ui=kerberos \
      "hbase.security.authentication.spnego.kerberos.principal=HTTP/localhost@$realm" \
      "hbase.security.authentication.spnego.kerberos.keytab=$dir/krb5/hbase.keytab" \
      hbase.hregion.memstore.mslab.enabled=false \
      hbase.security.authentication=kerberos \
      hbase.rpc.protection=integrity,privacy \
      hbase.rpc.crypto.encryption.aes.enabled=true \
      "hbase.master.kerberos.principal=hbase/localhost@$realm" \
      "hbase.master.keytab.file=$dir/krb5/hbase.keytab" \
      "hbase.regionserver.kerberos.principal=hbase/localhost@$realm" \
      "hbase.regionserver.keytab.file=$dir/krb5/hbase.keytab" \
      hbase.server.netty.tls.enabled=true \
      hbase.server.netty.tls.supportplaintext=true \
      hbase.server.netty.tls.client.auth.mode=NONE \
      "hbase.rpc.tls.keystore.location=$dir/tls/rpc.p12" \
      hbase.rpc.tls.keystore.type=PKCS12 \
      hbase.rpc.tls.keystore.password=tallrow-test \
      "hbase.rpc.tls.truststore.location=$dir/tls/ca.pem" \
      hbase.rpc.tls.truststore.type=PEM \
      "hbase.zookeeper.server.kerberos.principal=zookeeper/localhost@$realm" \
      "hbase.zookeeper.server.keytab.file=$dir/krb5/hbase.keytab" \
      "hbase.zookeeper.client.kerberos.principal=hbase/localhost@$realm" \
      "hbase.zookeeper.client.keytab.file=$dir/krb5/hbase.keytab" \
      ${props[@]+"${props[@]}"}; do
      echo "  <property><name>${kv%%=*}</name><value>${kv#*=}</value></property>"
    done
    echo '</configuration>'
  } >"$k/conf/hbase-site.xml"
  (cd "$k" && exec java "${jdk_flags[@]}" -Xmx384m "-Djava.security.krb5.conf=$KRB5_CONFIG" \
    -Dzookeeper.authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider ${flags[@]+"${flags[@]}"} \
    "-Dlog4j2.configurationFile=$k/conf/log4j2.properties" "-Dhbase.log.dir=$dir/logs" -cp "$k/conf:$cp" \
    org.apache.hadoop.hbase.master.HMaster start) >"$dir/logs/${k##*/}.log" 2>&1 &
  echo "$! $zk $m"
}
