// Real Kafka client data the projection tests did not write themselves (tests/streamsapp/__init__.py).
//
//   streams <bootstrap> <application.id> <input> <output> <state dir> <prefix=value>...
//     A Kafka Streams exactly_once_v2 application: the input's latest value per key (toTable, its
//     own changelog: a null input value is a tombstone there) and an aggregate per key (a second
//     changelog and the output topic: the value "delete" makes the aggregate null, a tombstone in
//     both), and a count per key in 5 s windows (a windowed changelog). The value "boom" fails
//     the stream thread once, after its transaction has sent records:
//     the thread is replaced and that transaction aborted. Runs until stdin closes, then closes.
//     The value "hang" (once per process) blocks the thread with its transaction open, for a test that
//     kills the process: a restart on the same state dir (the same transactional.id) fences it and the
//     coordinator aborts that transaction. Extra arguments (name=value) are Streams configs: "topic."
//     prefixed ones for the changelogs, "producer." prefixed ones for its producer.
//   produce <bootstrap> <topic> <codec> <transactional.id>
//     The Java producer, transactional, with <codec>: committed overwrites and tombstones, an
//     aborted transaction, timestamps that go back within a batch, headers on some records.
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.*;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.*;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.*;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.WindowStore;
import java.time.Duration;

public class StreamsApp {
    static final AtomicBoolean FAILED_ONCE = new AtomicBoolean(false);
    static final AtomicBoolean HUNG = new AtomicBoolean(false);

    public static void main(String[] args) throws Exception {
        if (args[0].equals("streams")) streams(args);
        else if (args[0].equals("produce")) produce(args);
        else throw new IllegalArgumentException("mode: streams or produce, not " + args[0]);
    }

    static java.nio.file.Path stateDir;

    /** Whether a process on this state dir hung before (the restart reprocesses the "hang" record). */
    static boolean hungBefore() {
        java.nio.file.Path mark = stateDir.resolve("hung-once");
        try {
            java.nio.file.Files.createFile(mark);
            return false;
        } catch (java.nio.file.FileAlreadyExistsException e) {
            return true;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void streams(String[] a) throws Exception {
        stateDir = java.nio.file.Paths.get(a[5]);
        java.nio.file.Files.createDirectories(stateDir);
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, a[2]);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, a[1]);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.STATE_DIR_CONFIG, a[5]);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);  // every update reaches the changelog
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        for (int i = 6; i < a.length; i++) {
            String[] kv = a[i].split("=", 2);
            p.put(kv[0], kv[1]);
        }
        StreamsBuilder b = new StreamsBuilder();
        KStream<String, String> in = b.stream(a[3]);
        in.toTable(Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("latest-store"));
        in.filter((k, v) -> v != null)
          .peek((k, v) -> {
              if (v.equals("hang") && !HUNG.getAndSet(true) && !hungBefore()) {
                  try { Thread.sleep(600); } catch (InterruptedException e) { }  // linger passes: sent
                  System.out.println("HANGING: a transaction left open until the process is killed");
                  System.out.flush();
                  try { Thread.sleep(600_000); } catch (InterruptedException e) { }
              }
              if (v.equals("boom") && FAILED_ONCE.compareAndSet(false, true)) {
                  try { Thread.sleep(600); } catch (InterruptedException e) { }  // linger passes: sent, then aborted
                  System.out.println("POISON: failing the stream thread once");
                  System.out.flush();
                  throw new IllegalStateException("poison record (once)");
              }
          })
          .groupByKey()
          .aggregate(() -> "", (k, v, agg) -> {
              if (v.equals("delete")) return null;
              if (v.equals("boom") || v.equals("hang")) return agg;
              String s = agg.isEmpty() ? v : agg + "|" + v;
              return s.length() > 120 ? s.substring(s.length() - 120) : s;
          }, Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("agg-store"))
          .toStream().to(a[4]);
        // a windowed count: its changelog's keys are the record key, the window's start and a sequence number
        in.filter((k, v) -> v != null && !v.equals("boom") && !v.equals("hang"))
          .groupByKey()
          .windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofSeconds(5)))
          .count(Materialized.<String, Long, WindowStore<Bytes, byte[]>>as("window-store"));
        KafkaStreams ks = new KafkaStreams(b.build(), p);
        ks.setUncaughtExceptionHandler(e -> {
            System.out.println("REPLACE_THREAD after " + e);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
        });
        ks.setStateListener((n, o) -> System.out.println("STATE " + n));
        ks.start();
        BufferedReader r = new BufferedReader(new InputStreamReader(System.in));
        while (r.readLine() != null) { }
        ks.close();
        System.out.println("CLOSED");
    }

    static void produce(String[] a) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, a[1]);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, a[3]);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, a[4]);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 20);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        String topic = a[2];
        long now = System.currentTimeMillis();
        try (KafkaProducer<String, String> pr = new KafkaProducer<>(p)) {
            pr.initTransactions();
            int n = 0;
            for (int t = 0; t < 6; t++) {
                pr.beginTransaction();
                for (int i = 0; i < 25; i++, n++) {
                    String key = "k" + ((n * 7) % 30);
                    String value = (t == 2 && i % 5 == 0) || (t == 4 && i % 3 == 0) ? null
                        : ("v" + t + "-" + i + "-").repeat(1 + (i % 4));
                    long ts = now - (i % 3 == 1 ? 5_000 + i * 37L : 0) + t;  // some go back
                    RecordHeaders h = new RecordHeaders();
                    if (i % 6 == 0) h.add("trace", ("t" + n).getBytes(StandardCharsets.UTF_8));
                    pr.send(new ProducerRecord<>(topic, 0, ts, key, value, h));
                }
                pr.flush();
                if (t == 3) pr.abortTransaction(); else pr.commitTransaction();
            }
        }
        System.out.println("PRODUCED");
    }
}
