// A check of a minikafka-protocol broker through minikafka's own client package: publishers
// each send their sequence and wait for every ack, while one subscriber (connected first)
// must receive every expected message, each publisher's in order, and nothing more.
// Built and run by ../server_with_minikafka_client.rs against the log server.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/daulet/minikafka/client"
)

func main() {
	pubAddr := flag.String("pub", "127.0.0.1:5555", "publish address")
	subAddr := flag.String("sub", "127.0.0.1:5556", "subscribe address")
	topic := flag.String("topic", "events", "topic")
	round := flag.Int("round", 1, "round tag of the messages this run publishes")
	publishers := flag.Int("publishers", 4, "publisher connections")
	each := flag.Int("each", 500, "messages per publisher")
	expect := flag.Int("expect", 2000, "messages the subscriber must receive in all (earlier rounds too)")
	timeout := flag.Duration("timeout", 60*time.Second, "give up after")
	flag.Parse()
	time.AfterFunc(*timeout, func() {
		fmt.Fprintln(os.Stderr, "FAIL: timed out")
		os.Exit(3)
	})

	received := make(chan error, 1)
	sub, err := client.NewSubscriber(client.SubscriberBrokerAddress(*subAddr), client.SubscriberTopic(*topic))
	if err != nil {
		fail("subscriber: %v", err)
	}
	go func() { received <- subscribe(sub, *expect) }()

	var wg sync.WaitGroup
	acked := make([]int, *publishers)
	errs := make(chan error, *publishers)
	for w := 0; w < *publishers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			pub, err := client.NewPublisher(client.PublisherBrokerAddress(*pubAddr), client.PublisherTopic(*topic))
			if err != nil {
				errs <- err
				return
			}
			defer pub.Close()
			for i := 0; i < *each; i++ {
				msg := []byte(fmt.Sprintf("r%d/w%d/%d", *round, w, i))
				if err := pub.Publish(*topic, &msg); err != nil {
					errs <- fmt.Errorf("publisher %d message %d: %v", w, i, err)
					return
				}
				acked[w]++
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		fail("%v", err)
	}
	total := 0
	for _, n := range acked {
		total += n
	}
	fmt.Printf("acked %d\n", total)
	if err := <-received; err != nil {
		fail("subscriber: %v", err)
	}
	sub.Close()
	fmt.Printf("received %d\n", *expect)
}

// subscribe reads until `expect` messages have arrived, checking that each (round, publisher)
// sequence is 0, 1, 2, ... with no gap or repeat, then that nothing more arrives.
func subscribe(sub *client.Subscriber, expect int) error {
	next := map[string]int{}
	got := 0
	for got < expect {
		msg, err := sub.Read()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("after %d messages: %v", got, err)
		}
		if err := check(next, string(msg)); err != nil {
			return fmt.Errorf("message %d: %v", got, err)
		}
		got++
	}
	if msg, err := sub.Read(); err == nil {
		return fmt.Errorf("an unexpected message after the %d expected: %q", expect, msg)
	}
	return nil
}

func check(next map[string]int, msg string) error {
	cut := strings.LastIndexByte(msg, '/')
	if cut < 0 {
		return fmt.Errorf("malformed %q", msg)
	}
	seq, err := strconv.Atoi(msg[cut+1:])
	if err != nil {
		return fmt.Errorf("malformed %q", msg)
	}
	key := msg[:cut]
	if seq != next[key] {
		return fmt.Errorf("%q: expected %s/%d", msg, key, next[key])
	}
	next[key] = seq + 1
	return nil
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(1)
}
